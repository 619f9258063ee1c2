"""The experiment commands, one module each: ``ecngym run``, ``eval``, ``train`` and ``compare``.

:mod:`~ecngym.commands.factories` builds what they share from a config (the env, the controller,
the results store); :mod:`~ecngym.commands.checks` refuses bad input before anything runs.
``ecngym.cli`` imports a command's module only when that command is called.
"""
