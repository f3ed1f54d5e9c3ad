"""Building the site from what ran: the MkDocs plugin (`tfv.site.plugin`, registered as the `tfv` entry point)
and the modules its events call. Not covered by the content hash: the HTML census re-checks its output at
every publish build, against the digests of the code that ran."""
