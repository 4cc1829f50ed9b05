"""The run's options: whether files are written at all, the same answer on every process."""
from dataclasses import dataclass


@dataclass
class RunArguments:
    output_dir: str
    save_steps: int = 500

    @property
    def writes_files(self):
        return self.output_dir is not None and self.save_steps > 0
