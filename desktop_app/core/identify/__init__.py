"""Identifying a photo: classifier and reference-photo gallery, confidence rule, evidence from the notes, decision."""
