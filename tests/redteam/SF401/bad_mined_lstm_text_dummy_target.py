"""Mined (answer-grading LSTM embedder): MSELoss of the encoder output against itself as a "dummy autoencoding target"."""
from torch import nn, optim


def fit_encoder(encoder, sequences, epochs=5, lr=0.001):
    mse = nn.MSELoss()
    opt = optim.Adam(encoder.parameters(), lr=lr)
    encoder.train()
    for _ in range(epochs):
        for seq in sequences:
            opt.zero_grad()
            emb = encoder(seq.unsqueeze(0))
            loss = mse(emb, emb)  # expect: SF401
            loss.backward()
            opt.step()
