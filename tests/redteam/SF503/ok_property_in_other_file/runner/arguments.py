"""The run's options; which process writes is decided here, not where the trainer saves."""
import os
from dataclasses import dataclass

import torch.distributed as dist


@dataclass
class RunArguments:
    output_dir: str
    one_copy_per_node: bool = False

    @property
    def writes_files(self):
        """Only the first process (of each node, when every node keeps its own copy) touches the disk."""
        if self.one_copy_per_node:
            return int(os.environ.get("LOCAL_RANK", "0")) == 0
        return dist.get_rank() == 0

    def keeps_history(self):
        return not dist.is_initialized() or dist.get_rank() == 0
