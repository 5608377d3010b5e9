"""The command line's commands, one module per area; :mod:`~judgekit.commands.tree` places them in groups.

Modules here import only typer at the top; everything heavy is imported inside the command functions so
that ``judgekit --help`` stays fast.

What lives here:

* :mod:`~judgekit.commands.tree`: every command's place below ``judgekit``, and where each old name went.
* :mod:`~judgekit.commands.runs`: ``grade``, ``report``, ``compare`` and ``import``.
* :mod:`~judgekit.commands.demo`: ``demo``, the main job on the bundled example.
* :mod:`~judgekit.commands.view`: ``view``, the static trial viewer.
* :mod:`~judgekit.commands.config`: ``config``, the configuration in force and where each value came from.
* :mod:`~judgekit.commands.calibrate`: ``calibrate`` and the judge-trust commands built on it.
* :mod:`~judgekit.commands.trust`: label planning, refusals, failure modes, bias probes, trace import.
* :mod:`~judgekit.commands.inspect_logs`: ``import inspect`` and ``export inspect`` (Inspect AI logs).
* :mod:`~judgekit.commands.cascade`: fitting a judge cascade on calibration labels.
* :mod:`~judgekit.commands.jury`: ``judge fit-jury``, a weighted jury's weights fitted on labels.
* :mod:`~judgekit.commands.canary`: ``judge canary-set`` and ``judge canary``, the drift canaries.
* :mod:`~judgekit.commands.refine`: ``judge refine``, a rubric refined on labels and measured on others.
* :mod:`~judgekit.commands.judge`: ``rubrics`` and ``cassette``.
* :mod:`~judgekit.commands.golden`: golden-set commands (validate, coverage, export, retire, promote, diff).
* :mod:`~judgekit.commands.growing`: commands that grow and guard the golden set.
* :mod:`~judgekit.commands.expert_labels`: ``labels page`` (an expert's labelling page), ``labels reconcile``.
* :mod:`~judgekit.commands.label_tools`: ``labels import`` (labels from annotation tools).
* :mod:`~judgekit.commands.grading`: ``cases check-references``.
* :mod:`~judgekit.commands.lint`: ``cases lint``, the golden-set linter.
* :mod:`~judgekit.commands.contamination`: ``keygen``, ``index``, ``canary``, ``scan``.
* :mod:`~judgekit.commands.judge_options`: the judge options and set-up shared by every grading command.
* :mod:`~judgekit.commands.inputs`: input paths a command reads (a missing one is a usage error).
* :mod:`~judgekit.commands.output`: ``--quiet``, redacted standard streams, JSON versions, a command's
  work with the collector off.
* :mod:`~judgekit.commands.helptext`: help texts, wrapped and given metavars, for every command at once.
* :mod:`~judgekit.commands.helpcells`: an option's help and its markers as one wrapped paragraph (rich).
* :mod:`~judgekit.commands.examples`: the examples that end each command's help.

What may import it: only ``cli`` (the layer above). ``demo`` and ``integrations`` call the library
(``api``, ``runner``...), never a command.
"""
