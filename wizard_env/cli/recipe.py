"""``wizard recipe``: build a checkpoint by every step of a recipe file, in one command that resumes.

    wizard recipe training/recipes/wizard-v13.toml --out runs/wizard-v13          # the shipped ppo, rebuilt (about 14 h)
    wizard recipe training/recipes/wizard-v7.toml --out runs/wizard-v7            # ppo-v7, rebuilt (66 min)
    wizard recipe training/recipes/wizard-v13.toml --out runs/wizard-v13 --resume # after a kill or a reboot
    wizard recipe my.toml --out runs/mine --until fit                             # the steps up to 'fit' only
    wizard recipe my.toml --list                                                  # the steps, without running them
    wizard recipe my.toml --out runs/mine --list                                  # ... and which are finished there
    wizard recipe my.toml --out runs/mine --from margins                          # 'margins' and the steps after it again
    wizard recipe training/recipes/wizard-v13.toml --out runs/v13 --reuse runs/wizard-v12  # wizard-v12's finished steps copied

A recipe (TOML; ``docs/training.md``, ``wizard_env.training.recipes.recipe``) lists the steps: ``wizard train-values``
iterations, a fresh fit on their data, the margin grid on held-out deals, the evaluation battery
(``wizard eval-suite``) and the copy of the chosen checkpoint to ``--out/agent.npz`` with the model card's
tables in ``--out/tables.md``. Each step writes into ``--out/steps/NAME`` and marks itself finished;
``--resume`` skips finished steps and continues the one that was cut short; ``--from STEP`` runs STEP and the steps
after it again from their start, in a run whose earlier steps are finished (STEP and the later steps may have
changed in the file). ``--list`` prints the steps, what each runs and its folder, and runs nothing. A recipe may
``extends = "other.toml"`` and give only the keys it changes. Needs the train extras.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wizard_env.training.recipes import recipe_plan, recipe_run
from wizard_env.training.recipes.recipe import load
from wizard_env.training.common import say
from wizard_env.util import options

from .common import require_packages
from .main import installed_version

VARIANT_OPTIONS = False  # the recipe fixes the rules of every step
HELP = "build a checkpoint by every step of a recipe file (data, fit, margins, evaluation), resumable"
DESCRIPTION = (
    "Run the steps of a recipe file (training/recipes/*.toml: train-values iterations, a fresh fit on their data, "
    "the margin grid on held-out deals, the evaluation battery, the published checkpoint and its tables) into --out, "
    "each step in its own folder. --resume continues a run that was killed, skipping finished steps."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``wizard recipe``."""
    parser.add_argument("recipe", metavar="FILE", type=options.path_type, help="the recipe (a TOML file)")
    parser.add_argument("--out", type=options.path_type, metavar="DIR",
                        help="the run's folder: steps/NAME for each step, then agent.npz and tables.md (needed but with --list)")
    parser.add_argument("--list", action="store_true",
                        help="print the steps (name, what it runs, its folder; with --out, whether it is finished there) "
                             "and run nothing")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run in --out (finished steps are kept; the recipe must be the one it started with)")
    parser.add_argument("--until", type=options.text_type, metavar="STEP", help="stop after the step of this name (continue later with --resume)")
    parser.add_argument("--from", type=options.text_type, dest="from_step", metavar="STEP",
                        help="run the step of this name and those after it again, from their start (their folders are "
                             "removed first), in the run in --out whose steps before it are finished; the recipe may "
                             "differ from the run's from that step on")
    parser.add_argument("--reuse", type=options.path_type, metavar="DIR",
                        help="first copy the finished steps of the recipe run in DIR that would run alike here (the same "
                             "settings, from the first step on; docs/training.md) instead of running them again: to vary a "
                             "later step, or to run a recipe that extends DIR's")


def run(args: argparse.Namespace) -> int:
    """``wizard recipe``."""
    recipe = load(args.recipe)  # every key checked before the packages are imported or anything is written
    recipe_plan.check_step_names(recipe, args.until, args.from_step)
    if args.list:
        given = [option for option, value in (("--resume", args.resume), ("--until", args.until),
                                              ("--from", args.from_step), ("--reuse", args.reuse)) if value]
        if given:
            raise ValueError(f"--list runs nothing: leave out {', '.join(given)}")
        print(recipe_plan.list_steps(recipe, None if args.out is None else Path(args.out)))
        return 0
    if args.out is None:
        raise ValueError("--out DIR is needed to run a recipe (--list alone prints its steps)")
    require_packages(("torch", "openskill", "matplotlib"), "wizard recipe")
    ran = recipe_run.run_recipe(recipe, args.out, args.resume, args.until, log=say, version=installed_version(),
                                 reuse=args.reuse, from_step=args.from_step)
    finished = (recipe_plan.step_folder(Path(args.out), recipe.steps[-1]) / recipe_plan.DONE).is_file()
    print(f"ran {len(ran)} step(s) of {len(recipe.steps)}" + (f"; the run in {args.out} is complete" if finished else
          f"; continue with: wizard recipe {args.recipe} --out {args.out} --resume"))
    return 0
