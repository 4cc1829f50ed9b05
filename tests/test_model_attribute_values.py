"""What a read of `<receiver>.<attr>` may hold is asked of the receiver's class, not of every store of that attribute
name in the file (`instances.attribute_values`), and a raising check counts as a check of a load's keys only when it
reads the keys of what the load is about (`key_checks.tests_keys`)."""

from __future__ import annotations

import textwrap

import libcst as cst

from stabfix.model.domain import key_checks
from stabfix.model.source.instances import attribute_values
from stabfix.model.source.names import build_names


def _tests(source: str) -> tuple[cst.Module, list[cst.BaseExpression]]:
    module = cst.parse_module(textwrap.dedent(source))
    tests: list[cst.BaseExpression] = []

    class Collect(cst.CSTVisitor):
        def visit_If(self, node: cst.If) -> None:
            tests.append(node.test)

    module.visit(Collect())
    return module, tests


def _spelled(values) -> list[str]:
    return [cst.Module([]).code_for_node(value) if value is not None else "None" for value in values]


def test_an_attribute_read_sees_the_stores_of_its_own_class_and_of_no_other():
    module, (trainer_flag, logger_flag, unknown_flag, args_flag) = _tests(
        """
        class Logger:
            def __init__(this, rank):
                this.enabled = rank == 0

        class Trainer:
            def __init__(self, cfg):
                self.enabled = cfg.train

            def fit(self):
                if self.enabled:
                    pass

        def log(rank):
            logger = Logger(rank)
            if logger.enabled:
                pass
            if self_less.enabled:
                pass

        def main(args):
            args.enabled = True
            if args.enabled:
                pass
        """
    )
    names = build_names(module)
    assert _spelled(attribute_values(names, trainer_flag)) == ["cfg.train"]  # the trainer's own
    assert _spelled(attribute_values(names, logger_flag)) == ["rank == 0"]  # an instance built in the file, whatever `self` is called
    # a receiver whose class the file does not show may be an instance of any of them
    assert _spelled(attribute_values(names, unknown_flag)) == ["rank == 0", "cfg.train", "True"]
    assert _spelled(attribute_values(names, args_flag)) == ["rank == 0", "cfg.train", "True"]


def test_a_raising_check_counts_only_when_it_reads_the_keys_of_what_the_load_is_about():
    module, (config_check, checkpoint_check, model_check) = _tests(
        """
        def restore(model, ckpt, cfg):
            missing = set(model.state_dict().keys()) - set(ckpt)
            if not cfg.keys():
                raise ValueError("empty config")
            if set(ckpt["model"].keys()) != {"w"}:
                raise KeyError("w")
            if missing:
                raise KeyError(missing)
        """
    )
    names = build_names(module)
    model_read = next(name for name in names.uses if name.value == "model")
    ckpt_read = next(name for name in names.uses if name.value == "ckpt")
    about = (model_read, ckpt_read)
    assert not key_checks.tests_keys(names, config_check, about)
    assert key_checks.tests_keys(names, checkpoint_check, about)
    assert key_checks.tests_keys(names, model_check, about)
