"""Mined shape: a GAN-style pipeline resumes four sub-networks and their optimizers from one torch.load without map_location (bad)."""
import os

import torch


def resume_parts(args, analyzer, encoder, decoder, critic, enc_opt, dec_opt):
    start_epoch = 0
    if args.resume and os.path.exists(args.resume):
        state = torch.load(args.resume)  # expect: SF107
        start_epoch = state["epoch"] + 1
        analyzer.load_state_dict(state["analyzer"])
        encoder.load_state_dict(state["encoder"])
        decoder.load_state_dict(state["decoder"])
        critic.load_state_dict(state["critic"])
        enc_opt.load_state_dict(state["enc_opt"])
        dec_opt.load_state_dict(state["dec_opt"])
    return start_epoch
