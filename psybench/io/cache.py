"""The shared output cache (``--cache``) written with the user's permissions, one level per entry.

Snakemake's local output cache (``snakemake.caching.local.OutputFileCache``, 9.x)
makes every entry readable *and writable by everyone* (files 0666, directories
0777), whatever the umask: on a shared filesystem anyone can then replace a
colleague's artifact. And it moves a finished entry into place with
``shutil.move``, which puts it *inside* an entry of the same name that is already
there (two runs storing the same job), nesting ``<hash>.zarr/<hash>.zarr``.

:class:`UmaskOutputFileCache` keeps Snakemake's cache (keys, layout, fetching) and
changes these two things: entries get the modes the user's umask gives (plus group
read and write when the cache directory is group-shared: setgid or group-writable,
the usual set-up of a team's cache), and an entry that already exists is kept (the
same key means the same provenance, hence the same content) instead of receiving a
nested copy. :func:`use_umask_cache` installs it for one workflow run.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from tempfile import TemporaryDirectory

__all__ = ["cache_modes", "use_umask_cache"]  # and UmaskOutputFileCache (module __getattr__: imports Snakemake)


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def cache_modes(cache_dir: str | os.PathLike, umask: int | None = None) -> tuple[int, int]:
    """Permission bits ``(file, directory)`` of cache entries under ``cache_dir``.

    Parameters
    ----------
    cache_dir : path-like
        The cache location (``SNAKEMAKE_OUTPUT_CACHE``).
    umask : int, optional
        Default: the process's umask.

    Returns
    -------
    (int, int)
        ``0o666 & ~umask`` and ``0o777 & ~umask``, with group read/write (and
        search) added when ``cache_dir`` is group-shared (setgid bit or group
        write permission). Others never get write permission.
    """
    umask = current_umask() if umask is None else umask
    file_mode, dir_mode = 0o666 & ~umask, 0o777 & ~umask
    mode = os.stat(cache_dir).st_mode
    if mode & (stat.S_ISGID | stat.S_IWGRP):
        file_mode |= stat.S_IRGRP | stat.S_IWGRP
        dir_mode |= stat.S_IRGRP | stat.S_IWGRP | stat.S_IXGRP
    return file_mode & ~stat.S_IWOTH, dir_mode & ~stat.S_IWOTH


def _cache_class():
    from snakemake.caching.local import OutputFileCache
    from snakemake.exceptions import WorkflowError
    from snakemake.logging import logger

    class UmaskOutputFileCache(OutputFileCache):
        """Snakemake's local output cache with umask permissions and one level per entry."""

        def __init__(self):
            super().__init__()
            self.file_permissions, self.dir_permissions = cache_modes(self.path)

        async def store(self, job):
            if not os.access(self.path, os.W_OK):
                raise WorkflowError(f"Cannot access cache location {self.path}: it must exist and be writable.")
            with TemporaryDirectory(dir=self.path) as tmpdirname:
                for outputfile, cachefile in await self.get_outputfiles_and_cachefiles(job):
                    if not os.path.exists(outputfile):
                        raise WorkflowError(f"Cannot move output file {outputfile} to cache: it does not exist.")
                    self.check_writeable(cachefile)
                    logger.info(f"Moving output file {outputfile} to cache.")
                    tmp = Path(tmpdirname) / cachefile.name
                    shutil.move(outputfile, tmp, copy_function=shutil.copy)
                    self.set_permissions(tmp)
                    try:  # rename, never into an existing entry (shutil.move would nest it)
                        os.rename(tmp, cachefile)
                    except OSError:
                        if not cachefile.exists():
                            raise
                        logger.info(f"Cache entry {cachefile} was stored meanwhile: keeping it.")
                    self.symlink(cachefile, outputfile, utime=False)

    return UmaskOutputFileCache


def __getattr__(name: str):
    if name == "UmaskOutputFileCache":  # Snakemake is imported only when the class is asked for
        return _cache_class()
    raise AttributeError(name)


def use_umask_cache() -> None:
    """Make the running Snakemake (9.x) use :class:`UmaskOutputFileCache` for ``--cache``.

    Call while the Snakefile is parsed (``rules/common.smk``): Snakemake creates
    its local cache after parsing, from ``snakemake.workflow.LocalOutputFileCache``.
    """
    import snakemake.workflow

    if not getattr(snakemake.workflow.LocalOutputFileCache, "_psybench", False):
        cls = _cache_class()
        cls._psybench = True
        snakemake.workflow.LocalOutputFileCache = cls
