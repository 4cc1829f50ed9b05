"""One backward, two optimizers stepped and cleared in turn."""
import torch

encoder_opt = torch.optim.Adam(encoder.parameters())
decoder_opt = torch.optim.Adam(decoder.parameters())
for x in loader:
    loss = reconstruction(decoder(encoder(x)), x)
    loss.backward()
    encoder_opt.step()
    encoder_opt.zero_grad()
    decoder_opt.step()
    decoder_opt.zero_grad()
