# Peak memory of an LM loss above its inputs, in bytes per token and vocabulary entry: BF16 logits
# from a linear head (8192 tokens, Llama 3's 128,256-entry vocabulary, hidden 4096), then
# F.cross_entropy on their FP32 upcast, eager and under torch.compile; forward and backward, the
# third of three repetitions; the gradients of the head's input and weight are subtracted. What
# wavecast's loss memory term (crates/wavecast-sim/src/train.rs, LOSS_FP32_COPIES) is checked
# against. Run as is on the lent H100 (data/measurements/h100/PROVENANCE.md, loss_memory.csv):
#   python3 loss_memory.py
import torch, torch.nn.functional as F
T,V,H=8192,128256,4096
def run(name,fn):
    torch.cuda.empty_cache()
    x=torch.randn(T,H,device="cuda",dtype=torch.bfloat16,requires_grad=True)
    w=(torch.randn(V,H,device="cuda",dtype=torch.bfloat16)*0.01).requires_grad_(True)
    t=torch.randint(0,V,(T,),device="cuda")
    for _ in range(3):
        x.grad=None;w.grad=None
        torch.cuda.synchronize();torch.cuda.reset_peak_memory_stats()
        base=torch.cuda.memory_allocated()
        logits=x@w.t()
        loss=fn(logits,t)
        loss.backward()
        torch.cuda.synchronize()
        peak=torch.cuda.max_memory_allocated()-base
        del logits,loss
    print(name,"bytes per token-entry above inputs (grads of x,w subtracted):",(peak-x.numel()*2-w.numel()*2)/(T*V),flush=True)
eager=lambda l,t:F.cross_entropy(l.float(),t)
run("eager",eager)
run("compiled",torch.compile(eager))
