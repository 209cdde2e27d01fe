# psybench: benchmark vision models against human behaviour.
# Stages: stimuli -> responses -> readouts -> scores -> aggregate (+ figures, report).
# Run: snakemake --cores 2 all   (profiles/default is loaded automatically)
from snakemake.utils import min_version

min_version("9.0")

from psybench.config import check_config_files

# Snakemake's own YAML loader keeps the later of two equal keys and expands aliases
# while it merges the config files: each is read strictly first, so that a key given
# twice or an alias bomb is refused, naming the key (psybench.config.check_config_files).
check_config_files(["config/config.yaml", *workflow.config_settings.configfiles])


configfile: "config/config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/motion.smk"
include: "rules/attention.smk"
include: "rules/intphys.smk"
include: "rules/aggregate.smk"


rule all:
    default_target: True
    input:
        get_all_targets(),
        # what the quarantine moved aside (this run or an earlier one), rebuilt with all downstream
        get_rebuild_targets,
