"""Lightning manual optimization: `manual_backward` would scale, but here the module calls backward itself."""
import lightning.pytorch as pl
import torch


class GANModule(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        g_opt, d_opt = self.optimizers()
        with torch.autocast("cuda", dtype=torch.float16):  # expect: SF301
            fake = self.generator(batch["z"])
            d_loss = self.disc(fake.detach()).mean() - self.disc(batch["real"]).mean()
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()
