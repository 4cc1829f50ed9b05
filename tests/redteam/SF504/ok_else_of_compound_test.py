"""The barrier sits in the `elif` of a compound test whose rank-independent part sends every rank there
(accelerate's ordered logging shape)."""
from accelerate import PartialState


def log(logger, msg, in_order, main_only, is_main):
    if not in_order and (is_main or not main_only):
        logger.info(msg)
    elif in_order:
        state = PartialState()
        for i in range(state.num_processes):
            if i == state.process_index:
                logger.info(msg)
            state.wait_for_everyone()
