"""`kdesk --self-test` in the development install: index, search, extractive answer, main window."""

from __future__ import annotations

import pytest

from desktop_app.cli.main import main


@pytest.mark.slow
def test_self_test_indexes_answers_and_opens_the_window(capsys):
    assert main(["--self-test"]) == 0
    err = capsys.readouterr().err
    assert "indexed a sample document" in err
    assert "South Island" in err  # the extractive answer, cited
    assert "self-test passed" in err
