"""Running the examples of docs/ under pytest: the plugin (`tfv.run.plugin`, registered as the `tfv` pytest11
entry point) and what it is made of. Every module here is covered by each report's content hash."""
