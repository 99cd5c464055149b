"""The anchor wing: a designed voice's anchor cached, pinned, made (canonically or in the
serving mode), planned at start-up and built in the background; its CLI is
``convert_anchors.py``."""
