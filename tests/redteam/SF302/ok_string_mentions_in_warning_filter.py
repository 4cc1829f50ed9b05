"""Silencing the FutureWarning by message text does not call the deprecated API."""
import warnings

warnings.filterwarnings("ignore", message=r".*torch\.cuda\.amp\.autocast\(args\.\.\.\) is deprecated.*")
warnings.filterwarnings("ignore", message=r".*torch\.cuda\.amp\.GradScaler\(args\.\.\.\) is deprecated.*")
