"""Two scalers from torch cuda import amp (must be reported)."""
from torch.cuda import amp


def build_scalers():
    cls_scaler = amp.GradScaler()  # expect: SF302
    seg_scaler = amp.GradScaler(growth_interval=500)  # expect: SF302
    return cls_scaler, seg_scaler
