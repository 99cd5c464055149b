"""The start-up shell: flags and ``Config``, the start-up steps and their timing, the listen
address and memory checks, the metrics server, and serving the protocols (``cli.run``)."""
