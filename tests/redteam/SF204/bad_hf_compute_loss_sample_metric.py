"""Seq2Seq Trainer subclass decoding predictions in compute_loss to log a ROUGE proxy (bad)."""
from transformers import Seq2SeqTrainer


class RougeLoggingTrainer(Seq2SeqTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        outputs = model(**inputs)
        pred_ids = model.generate(inputs["input_ids"], max_new_tokens=60, num_beams=1)  # expect: SF204
        preds = self.tokenizer.batch_decode(pred_ids, skip_special_tokens=True)
        self.log({"train_rouge_proxy": len(preds[0])})
        return (outputs.loss, outputs) if return_outputs else outputs.loss
