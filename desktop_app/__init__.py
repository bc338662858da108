"""Knowledge Desk: a local knowledge assistant (core/ without Qt, gui/ the window, cli/ `kdesk`)."""
