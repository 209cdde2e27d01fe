# Config validation, damaged-store quarantine, wildcard constraints, the code hashes of
# the shared stages and the shared input functions; each track's own input and params
# functions are in rules/<track>_common.smk.
import functools
import shlex
import sys
from pathlib import Path

from psybench.config import prepare_workflow
from psybench.io.cache import use_umask_cache
from psybench.io.inputs import quarantine_changed_tree
from psybench.io.integrity import quarantine_damaged, repair_results
from psybench.io.planning import may_repair
from psybench.provenance import PACKAGE_ROOT, rule_code_hash

# Validated once (schema defaults filled in place) and every track's models resolved
# once: a bad value fails before any job, naming its key (psybench.config.ConfigError).
MODELS = prepare_workflow(config)

# Snakemake sees a directory output as up to date whatever it holds: move damaged
# stores and tables aside so that they, and everything downstream, are rebuilt, and
# remove the temporaries of killed writers. Only in the real run, never in a dry run,
# --unlock ... or beside a run holding the lock.
_repair = False
if config["verify_stores"] == "structural":
    _repair, _ = may_repair(Path.cwd(), sys.argv[1:], main_process=workflow.is_main_process)
    # one walk of results/: killed writers' temporaries removed, then each folder's artifacts checked
    _removed, _moved = repair_results("results") if _repair else ([], [])
    for _tmp in _removed:
        logger.info(f"psybench: removed {_tmp}, left by a killed run")
    for _store, _why in _moved:
        _kind = "table" if _store.suffix == ".csv" else "store"
        logger.warning(f"psybench: moved damaged {_kind} {_store} to results/.damaged/ to rebuild it: {_why}")


# Trees written by the workflow and checked against their recorded listing before each run
# (the generated IntPhys splits: rules/intphys_common.smk adds them).
LISTED_TREES = []


# Record what this run wrote as intact (results/.psybench-verified.json, and the stat of
# each listed tree equal to its listing): the next run's check then only stats it (the no-op
# rerun after a full run reads no artifact and no listing).
# Runs only after jobs ran and succeeded, never after a dry run or "Nothing to be done".
onsuccess:
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
