"""TensorFlow Verified's machinery: `tfv.run` runs a page's examples (a pytest plugin), `tfv.site` builds the
site from what ran (a MkDocs plugin), and the modules here are what both share: the project's layout, what a
page is, the code a page shows, the in-page directives, the report, its rules and its content hash.
Nothing here imports TensorFlow or pytest: the docs environment has neither."""
