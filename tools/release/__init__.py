"""Releasing: the Home Assistant add-on repository and the release workflow's checks.

- ``supervisor_schema``: the Supervisor's rules for ``repository.yaml``, an add-on's
  ``config.yaml``, ``build.yaml`` and translations, and how its store finds them;
- ``addon_folder``: writes the add-on folder with this checkout's wheel inside it (a local
  install, and what the release workflow builds the add-on image from), and the exact
  build command the Supervisor runs for it;
- ``check``: a version tag against the package's and the add-on's versions, and the image
  names the release pushes (derived from the add-on's ``image``).

Used by ``.github/workflows/release.yml`` and the tests in ``tests/deploy/``.
"""
