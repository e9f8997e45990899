"""`ir-explorer serve`: the TUI in a browser (server), behind a token and the page's own Origin (guard), one app
process per tab, ended for sure (sessions); the page itself in templates/."""
