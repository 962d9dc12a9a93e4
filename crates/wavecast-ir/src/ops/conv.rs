//! 2-D convolution and transposed convolution (1-D convolutions are 2-D with height 1), with
//! groups (depthwise when groups = channels), dilation, stride, asymmetric padding and bias.
//!
//! Shapes are NCHW. The weight of a convolution is (c_out, c_in/groups, kh, kw); the weight of a
//! transposed convolution is (c_in, c_out/groups, kh, kw). The backward pass is two more
//! convolutions of the same multiply-accumulate count: the data gradient (a transposed
//! convolution of dY with the weight) and the weight gradient (a correlation of X with dY), plus a
//! bias reduction. They are kept as the same shape with a different [`ConvPass`], so FLOPs and
//! bytes of every pass come from the formulas below.

use crate::dims::{checked_mul, dim, DimError};
use crate::ops::{Op, Reduction};
use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConvPass {
    Forward,
    /// dX from dY and the weight.
    BackwardData,
    /// dW from X and dY.
    BackwardWeight,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conv {
    pub batch: u64,
    pub c_in: u64,
    pub c_out: u64,
    /// Input height and width.
    pub in_hw: [u64; 2],
    /// Kernel height and width.
    pub kernel: [u64; 2],
    pub stride: [u64; 2],
    /// Zero padding in ONNX order: [top, left, bottom, right].
    pub pads: [u64; 4],
    pub dilation: [u64; 2],
    pub groups: u64,
    pub bias: bool,
    /// A transposed ("deconvolution") layer: each input pixel scatters a kernel-sized patch.
    #[serde(default)]
    pub transposed: bool,
    /// Extra rows/columns on the bottom/right of a transposed convolution's output.
    #[serde(default)]
    pub output_padding: [u64; 2],
    pub dtype: DType,
    pub pass: ConvPass,
    /// False for a layer whose input needs no gradient (the first layer): autograd then skips
    /// the data-gradient convolution.
    #[serde(default = "yes")]
    pub input_grad: bool,
}

fn yes() -> bool {
    true
}

impl Conv {
    /// A stride-1, unpadded, ungrouped forward convolution without bias; refine it with the
    /// builder methods and finish with [`Conv::build`], which validates the shape.
    pub fn new(batch: u64, c_in: u64, c_out: u64, in_hw: [u64; 2], kernel: [u64; 2], dtype: DType) -> Conv {
        Conv {
            batch,
            c_in,
            c_out,
            in_hw,
            kernel,
            stride: [1, 1],
            pads: [0; 4],
            dilation: [1, 1],
            groups: 1,
            bias: false,
            transposed: false,
            output_padding: [0, 0],
            dtype,
            pass: ConvPass::Forward,
            input_grad: true,
        }
    }

    /// A square convolution as the measurement files describe it.
    #[allow(clippy::too_many_arguments)]
    pub fn square(batch: u64, c_in: u64, c_out: u64, size: u64, kernel: u64, stride: u64, padding: u64, dtype: DType) -> Result<Conv, DimError> {
        Conv::new(batch, c_in, c_out, [size, size], [kernel, kernel], dtype).stride(stride).pad(padding).bias(true).build()
    }

    pub fn stride(mut self, s: u64) -> Conv {
        self.stride = [s, s];
        self
    }
    /// The same padding on every side.
    pub fn pad(mut self, p: u64) -> Conv {
        self.pads = [p; 4];
        self
    }
    pub fn groups(mut self, g: u64) -> Conv {
        self.groups = g;
        self
    }
    pub fn dilation(mut self, d: u64) -> Conv {
        self.dilation = [d, d];
        self
    }
    pub fn bias(mut self, b: bool) -> Conv {
        self.bias = b;
        self
    }
    pub fn transposed(mut self, output_padding: u64) -> Conv {
        self.transposed = true;
        self.output_padding = [output_padding; 2];
        self
    }
    pub fn no_input_grad(mut self) -> Conv {
        self.input_grad = false;
        self
    }

    /// Validates every dimension and the output size; the only way shapes from user files enter.
    pub fn build(self) -> Result<Conv, DimError> {
        dim("conv batch", self.batch)?;
        dim("conv input channels", self.c_in)?;
        dim("conv output channels", self.c_out)?;
        for (name, v) in [("conv input height", self.in_hw[0]), ("conv input width", self.in_hw[1])] {
            dim(name, v)?;
        }
        for i in 0..2 {
            dim("conv kernel size", self.kernel[i])?;
            dim("conv stride", self.stride[i])?;
            dim("conv dilation", self.dilation[i])?;
            if self.pads[i] > crate::dims::MAX_DIM || self.pads[i + 2] > crate::dims::MAX_DIM {
                return Err(DimError::TooLarge { name: "conv padding".into(), value: self.pads[i].max(self.pads[i + 2]), max: crate::dims::MAX_DIM });
            }
        }
        dim("conv groups", self.groups)?;
        if !self.c_in.is_multiple_of(self.groups) || !self.c_out.is_multiple_of(self.groups) {
            return Err(DimError::Invalid {
                what: format!("conv groups {} must divide input channels {} and output channels {}", self.groups, self.c_in, self.c_out),
            });
        }
        let out = self.try_out_hw()?;
        checked_mul("conv output", &[self.batch, self.c_out, out[0], out[1]])?;
        checked_mul("conv input", &[self.batch, self.c_in, self.in_hw[0], self.in_hw[1]])?;
        let (pixels, per_pixel) = if self.transposed {
            ([self.c_in, self.in_hw[0], self.in_hw[1]], self.c_out / self.groups)
        } else {
            ([self.c_out, out[0], out[1]], self.c_in / self.groups)
        };
        checked_mul("conv flops", &[2, self.batch, pixels[0], pixels[1], pixels[2], per_pixel, self.kernel[0], self.kernel[1]])?;
        Ok(self)
    }

    fn try_out_hw(&self) -> Result<[u64; 2], DimError> {
        let mut out = [0; 2];
        #[allow(clippy::needless_range_loop)]
        for i in 0..2 {
            let (n, k, s, d) = (self.in_hw[i] as i128, self.kernel[i] as i128, self.stride[i] as i128, self.dilation[i] as i128);
            let pad = self.pads[i] as i128 + self.pads[i + 2] as i128;
            let span = d * (k - 1) + 1;
            let o = if self.transposed {
                (n - 1) * s - pad + span + self.output_padding[i] as i128
            } else {
                let room = n + pad - span;
                if room < 0 {
                    -1
                } else {
                    room / s + 1
                }
            };
            if o < 1 {
                return Err(DimError::Invalid {
                    what: format!(
                        "conv output {} is empty: input {}, kernel {}, stride {}, padding {}, dilation {}",
                        if i == 0 { "height" } else { "width" },
                        n,
                        k,
                        s,
                        pad,
                        d
                    ),
                });
            }
            out[i] = o as u64;
        }
        Ok(out)
    }

    /// Output height and width.
    pub fn out_hw(&self) -> [u64; 2] {
        self.try_out_hw().unwrap_or([1, 1])
    }

    /// Depthwise: one filter per input channel (groups = c_in, possibly with a channel multiplier).
    pub fn is_depthwise(&self) -> bool {
        self.groups > 1 && self.groups == self.c_in
    }

    pub fn input_elements(&self) -> f64 {
        self.batch as f64 * self.c_in as f64 * self.in_hw[0] as f64 * self.in_hw[1] as f64
    }

    pub fn output_elements(&self) -> f64 {
        let [h, w] = self.out_hw();
        self.batch as f64 * self.c_out as f64 * h as f64 * w as f64
    }

    pub fn weight_elements(&self) -> f64 {
        let per_group_in = if self.transposed { self.c_in } else { self.c_in / self.groups.max(1) };
        let per_group_out = if self.transposed { self.c_out / self.groups.max(1) } else { self.c_out };
        per_group_in as f64 * per_group_out as f64 * self.kernel[0] as f64 * self.kernel[1] as f64
    }

    /// Multiply-accumulates, the same for the forward and both backward passes. A convolution
    /// computes every output from (c_in/groups)·kh·kw inputs; a transposed one scatters every
    /// input into (c_out/groups)·kh·kw outputs. Padding zeros count, as published MAC tables do.
    pub fn macs(&self) -> f64 {
        let k = self.kernel[0] as f64 * self.kernel[1] as f64;
        let g = self.groups.max(1) as f64;
        if self.transposed {
            self.input_elements() * (self.c_out as f64 / g) * k
        } else {
            self.output_elements() * (self.c_in as f64 / g) * k
        }
    }

    pub fn flops(&self) -> f64 {
        let bias = if self.bias && self.pass == ConvPass::Forward { self.output_elements() } else { 0.0 };
        2.0 * self.macs() + bias
    }

    /// Every pass reads two of (X, W, Y) and writes the third once.
    pub fn bytes(&self) -> f64 {
        let e = self.dtype.size_bytes() as f64;
        let bias = if self.bias && self.pass == ConvPass::Forward { self.c_out as f64 } else { 0.0 };
        e * (self.input_elements() + self.weight_elements() + self.output_elements() + bias)
    }

    pub fn params(&self) -> u64 {
        if self.pass != ConvPass::Forward {
            return 0;
        }
        (self.weight_elements() as u64).saturating_add(if self.bias { self.c_out } else { 0 })
    }

    /// Data gradient (unless the input needs none), weight gradient, and the bias gradient as a
    /// reduction of dY over batch and pixels.
    pub fn backward(&self) -> Vec<Op> {
        let mut ops = Vec::new();
        if self.input_grad {
            ops.push(Op::Conv(Conv { pass: ConvPass::BackwardData, bias: false, ..self.clone() }));
        }
        ops.push(Op::Conv(Conv { pass: ConvPass::BackwardWeight, bias: false, ..self.clone() }));
        if self.bias {
            ops.push(Op::Reduction(Reduction {
                elements_in: self.output_elements() as u64,
                elements_out: self.c_out,
                dtype: self.dtype.vector_storage(),
            }));
        }
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resnet_stem_counts() {
        // 7×7/2 conv, 3→64, 224² input, padding 3: 112² output.
        let c = Conv::new(1, 3, 64, [224, 224], [7, 7], DType::Fp32).stride(2).pad(3).build().unwrap();
        assert_eq!(c.out_hw(), [112, 112]);
        assert_eq!(c.macs(), 112.0 * 112.0 * 64.0 * 3.0 * 49.0);
        assert_eq!(c.flops(), 2.0 * 118_013_952.0);
        assert_eq!(c.params(), 64 * 3 * 49);
        let bytes = 4.0 * (3.0 * 224.0 * 224.0 + 64.0 * 3.0 * 49.0 + 64.0 * 112.0 * 112.0);
        assert_eq!(c.bytes(), bytes);
    }

    #[test]
    fn depthwise_dilated_and_bias() {
        // 3×3 depthwise on 32 channels, dilation 2, padding 2 keeps 10×10; bias adds one FLOP per output.
        let c = Conv::new(2, 32, 32, [10, 10], [3, 3], DType::Fp16).groups(32).dilation(2).pad(2).bias(true).build().unwrap();
        assert!(c.is_depthwise());
        assert_eq!(c.out_hw(), [10, 10]);
        assert_eq!(c.macs(), 2.0 * 32.0 * 100.0 * 9.0);
        assert_eq!(c.flops(), 2.0 * 57_600.0 + 6400.0);
        assert_eq!(c.params(), 32 * 9 + 32);
    }

    #[test]
    fn transposed_conv_doubles_resolution() {
        // DCGAN block: 4×4/2 transposed conv, padding 1, 512→256 channels, 4² → 8².
        let c = Conv::new(1, 512, 256, [4, 4], [4, 4], DType::Fp32).stride(2).pad(1).transposed(0).build().unwrap();
        assert_eq!(c.out_hw(), [8, 8]);
        assert_eq!(c.macs(), 16.0 * 256.0 * 16.0 * 512.0);
        assert_eq!(c.params(), 512 * 256 * 16);
        // First layer: 1×1 latent to 4×4 with no padding.
        let z = Conv::new(1, 100, 512, [1, 1], [4, 4], DType::Fp32).transposed(0).build().unwrap();
        assert_eq!(z.out_hw(), [4, 4]);
    }

    #[test]
    fn backward_has_same_macs_and_skips_input_grad_of_first_layer() {
        let c = Conv::new(8, 64, 64, [56, 56], [3, 3], DType::Fp32).pad(1).bias(true).build().unwrap();
        let bw = c.backward();
        assert_eq!(bw.len(), 3);
        for op in &bw[..2] {
            assert_eq!(op.flops(), 2.0 * c.macs());
            assert_eq!(op.bytes(), c.bytes() - 4.0 * 64.0);
            assert_eq!(op.params(), 0);
        }
        assert!(matches!(bw[2], Op::Reduction(_)));
        assert_eq!(c.clone().no_input_grad().backward().len(), 2);
    }

    #[test]
    fn bad_shapes_are_errors_not_panics() {
        assert!(Conv::new(0, 3, 8, [8, 8], [3, 3], DType::Fp32).build().is_err());
        assert!(Conv::new(1, 3, 8, [2, 2], [3, 3], DType::Fp32).build().is_err(), "kernel larger than input");
        assert!(Conv::new(1, 6, 8, [8, 8], [3, 3], DType::Fp32).groups(4).build().is_err(), "groups must divide channels");
        assert!(Conv::new(1 << 40, 1 << 40, 1 << 40, [1 << 20, 1 << 20], [3, 3], DType::Fp32).build().is_err());
        assert!(Conv::square(1, 3, 8, 5, 3, 0, 1, DType::Fp32).is_err(), "zero stride");
    }
}
