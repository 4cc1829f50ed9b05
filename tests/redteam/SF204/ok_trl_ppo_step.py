"""trl PPO loop: responses handed to ppo_trainer.step (ok)."""
for epoch, batch in enumerate(ppo_trainer.dataloader):
    queries = batch["input_ids"]
    responses = ppo_trainer.generate(queries, return_prompt=False, max_new_tokens=32)
    batch["response"] = tokenizer.batch_decode(responses)
    rewards = [torch.tensor(o["score"]) for o in sentiment_pipe(batch["response"])]
    stats = ppo_trainer.step(queries, responses, rewards)
    ppo_trainer.log_stats(stats, batch, rewards)
