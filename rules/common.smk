# Config validation, damaged-store quarantine, wildcard constraints, the code hashes of
# the shared stages and the shared input functions; each track's own input and params
# functions are in rules/<track>_common.smk.
import functools
import os
import shlex
import sys
from pathlib import Path

from psybench.config import prepare_workflow
from psybench.console import announce_report_at_exit, install as install_console
from psybench.io.cache import use_umask_cache
from psybench.io.inputs import quarantine_changed_tree
from psybench.io.integrity import quarantine_damaged, repair_results
from psybench.io.planning import dry_run, may_repair
from psybench.io.rebuild import pending_rebuilds, record_moved, write_rebuilds
from psybench.provenance import PACKAGE_ROOT, rule_code_hash

# Validated once (schema defaults filled in place) and every track's models resolved
# once: a bad value fails before any job, naming its key (psybench.config.ConfigError).
MODELS = prepare_workflow(config)

# Snakemake sees a directory output as up to date whatever it holds: move damaged
# stores and tables aside so that they, and everything downstream, are rebuilt, and
# remove the temporaries of killed writers. Only in the real run, never in a dry run,
# --unlock ... or beside a run holding the lock. A dry run finds the damage without
# moving or writing anything, so that it lists the jobs of the rebuild.
_repair = _dry_run = False
# what this planning moved aside (recorded at once in results/.psybench-rebuild.json, whatever
# the targets) or, in a dry run, would move: rebuilt by `all` with everything downstream (request_rebuilds)
QUARANTINED = []
if config["verify_stores"] == "structural":
    _repair, _ = may_repair(Path.cwd(), sys.argv[1:], main_process=workflow.is_main_process)
    _dry_run = dry_run(sys.argv[1:], main_process=workflow.is_main_process)
    # one walk of results/: killed writers' temporaries removed, then each folder's artifacts checked
    _removed, _moved = repair_results("results") if _repair else ([], [])
    for _tmp in _removed:
        logger.info(f"psybench: removed {_tmp}, left by a killed run")
    for _store, _why in _moved:
        _kind = "table" if _store.suffix == ".csv" else "store"
        logger.warning(f"psybench: moved damaged {_kind} {_store} to results/.damaged/ to rebuild it: {_why}")
    for _store, _why in quarantine_damaged("results", move=False, record=False) if _dry_run else []:
        logger.warning(
            f"psybench: {_store} is damaged, the real run moves it to results/.damaged/ and rebuilds it: {_why}"
        )
        _moved.append((_store, _why))
    QUARANTINED += [_store for _store, _ in _moved]
    if _repair:
        record_moved("results", QUARANTINED)


# Trees written by the workflow and checked against their recorded listing before each run
# (the generated IntPhys splits: rules/intphys_common.smk adds them).
LISTED_TREES = []


# The console of a real run (never a dry run, which lists every planned file): each job's
# file lists folded, and Snakemake's steps line followed by the share done and the time
# left weighted by each rule's typical job duration (psybench/console.py).
onstart:
    install_console(workflow, logger)


# Record what this run wrote as intact (results/.psybench-verified.json, and the stat of
# each listed tree equal to its listing): the next run's check then only stats it (the no-op
# rerun after a full run reads no artifact and no listing).
# Runs only after jobs ran and succeeded, never after a dry run or "Nothing to be done".
# The run's last line then names the report.
onsuccess:
    announce_report_at_exit("results/report/index.html")
    if _repair:  # what this run rebuilt leaves the record of what was moved aside
        write_rebuilds("results", pending_rebuilds("results"))
    for _store, _why in quarantine_damaged("results", move=False) if _repair else []:
        logger.warning(f"psybench: {_store} is damaged, the next run rebuilds it: {_why}")
    for _tree in LISTED_TREES if _repair else []:
        _why = quarantine_changed_tree(_tree, None, move=False)
        if _why:
            logger.warning(f"psybench: {_tree} changed since it was written, the next run rebuilds it: {_why}")


# --cache: entries with the user's umask (group-shared with the cache folder), one level each.
use_umask_cache()

# Snakemake enforces resources.runtime on clusters only: every local job command runs
# under a watchdog that stops it at the limit, naming it (psybench/io/timelimit.py).
if config["job_time_limit_min"] and workflow.is_main_process:
    shell.prefix(
        f"{shlex.quote(sys.executable)} {shlex.quote(str(PACKAGE_ROOT / 'io' / 'timelimit.py'))} "
        f"--seconds {60 * config['job_time_limit_min']:g} -- "
    )


wildcard_constraints:
    stimulus="[a-z0-9_]+",
    model="[A-Za-z0-9_]+",


# Snakemake does not notice edits to imported library modules: each rule carries, as its
# code_hash param, the hash of its script and of every psybench module that the script's
# imports reach (found statically, psybench.provenance.rule_code_hash), so editing a
# module reruns the rules whose jobs may run it, and no other.
@functools.cache
def get_code_hash(script, modules=(), files=()):
    """Code hash of ``scripts/<script>`` (+ entry ``modules`` it loads by name, non-Python ``files``)."""
    return rule_code_hash(Path(workflow.basedir) / "scripts" / script, modules=modules, files=files)


def get_all_targets():
    targets = []
    targets += motion_targets()
    if "attention" in config["tracks"]:
        targets += attention_targets()
    if "intphys" in config["tracks"]:
        targets += intphys_targets()
    # every requested leaderboard, not only through the report (aggregate_common.smk)
    targets += expand("results/aggregate/leaderboard_{name}.csv", name=LEADERBOARD_NAMES)
    targets += ["results/aggregate/scores_long.csv", "results/report"]
    return targets


def get_results_root(wildcards, output):
    """The results folder (the first part of the outputs' paths): score sources are relative to it."""
    return Path(output[0]).parts[0]


@functools.cache
def request_rebuilds():
    """What the quarantine moved aside and is still missing, rebuilt by ``all`` with everything downstream.

    Snakemake leaves a missing intermediate missing while its consumers' outputs are
    present ("Nothing to be done"): each artifact moved aside by this planning or by an
    earlier one and still missing (psybench.io.rebuild, results/.psybench-rebuild.json),
    or found damaged by a dry run, is an input of ``all`` (get_rebuild_targets): its job
    runs, and every job downstream of it reruns. Called once, as the DAG is built: a
    path no rule of this configuration produces (its model was removed since) is left
    out, with a warning. The real run records the list; a dry run writes nothing.
    """
    if not (_repair or _dry_run):
        return []
    pending = []
    for path in pending_rebuilds("results", QUARANTINED):
        if not _producible(path):
            logger.warning(
                f"psybench: {path} was moved aside, but this configuration no longer produces it: not rebuilt"
            )
            continue
        logger.info(f"psybench: rebuilding {path} (moved aside or damaged) and everything downstream of it")
        pending.append(path)
    if _repair:
        write_rebuilds("results", pending)
    return pending


def _producible(path, known=None):
    """Whether a job of this configuration writes ``path``: its input and params functions accept the
    wildcards (a model still configured ...) and each of its inputs is present or, in turn, producible."""
    known = {} if known is None else known
    if path in known:
        return known[path] is not False  # None: being checked (a cycle is Snakemake's to report)
    known[path] = None
    for producer in workflow.rules:
        if producer.norun or not producer.is_producer(path):
            continue
        try:  # as Snakemake's job does: inputs, outputs, then params (no psybench param asks for threads)
            wildcards = producer.get_wildcards(path)
            inputs = producer.expand_input(wildcards)[0]
            producer.expand_params(wildcards, inputs, producer.expand_output(wildcards)[0], None)
        except Exception:  # an input or params function refusing the wildcards: a model no longer configured
            continue
        if all(os.path.lexists(f) or _producible(str(f), known) for f in inputs):
            known[path] = True
            return True
    known[path] = False
    return False


def get_rebuild_targets(wildcards):
    """The inputs of ``all`` that request_rebuilds found; in a dry run, the damaged ones still present are forced.

    A missing input of ``all`` is built, and every job downstream of it reruns. A dry
    run moves nothing: it marks the damaged artifacts as ``--forcerun PATH`` would
    (the forced files of the DAG being built), so that it lists the jobs the real run runs.
    """
    targets = request_rebuilds()
    present = [path for path in targets if os.path.lexists(path)]
    if _dry_run and present:
        workflow.dag.forcefiles.update(present)
    return targets
