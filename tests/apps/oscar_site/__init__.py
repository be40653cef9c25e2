"""A minimal django-oscar 4.2 shop for tests: replay and observation against a real third-party app.

`settings` is Oscar's documented set-up (its INSTALLED_APPS, middleware, templates, a simple search
backend) with everything that changes per run under one folder: the SQLite database and uploaded
media (DEBUG serves the package's own static files). `server.OscarSite` migrates (from a
cached database when one matches), seeds a staff user, product classes, categories and a partner, and
serves it on 127.0.0.1 from a thread.
"""
