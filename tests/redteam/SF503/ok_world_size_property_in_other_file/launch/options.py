"""The run's options; how many processes run is answered here, from accelerate's state when there is one."""
from accelerate.state import PartialState


class LaunchOptions:
    def __init__(self, output_dir, use_accelerate=True):
        self.output_dir = output_dir
        self.state = None
        if use_accelerate:
            self.state = PartialState()

    @property
    def processes(self):
        if self.state is not None:
            return self.state.num_processes
        return 1
