package io.kvrouter.tracker.policy;

/**
 * Fits an {@link EngineTiming} online, by recursive least squares with exponential forgetting, to
 * the first-token times a router observes: each observation pairs the {@link EngineTiming#features}
 * the router saw when it placed a request with the milliseconds until the request's first token
 * came back.
 *
 * <p>Contract: starts at the prior (the mocker's model unless told otherwise), so a router that has
 * observed nothing predicts exactly like the prior; each {@link #observe} moves the coefficients
 * toward the least-squares fit of the recent observations (forgetting factor {@code forgetting}: an
 * observation's weight halves after {@code ln 2 / (1 − forgetting)} newer ones). Coefficients are
 * clamped at zero when read, never negative. A residual beyond {@code outlierSigmas} running
 * standard deviations is clipped to that bound first (Huber-like), so one request stuck behind a
 * preemption storm does not drag the model.
 *
 * <p>Cost: O(k²) per observation with k = 4 coefficients, no allocation; O(1) to read. Not
 * thread-safe.
 */
final class TimingFit {

  /*
   * Implementation notes. Standard RLS (Haykin, "Adaptive Filter Theory", ch. 10): gain
   * k = Pφ / (λ + φᵀPφ), θ += k·e, P = (P − kφᵀP) / λ. P starts at a diagonal whose entries are the
   * squared prior uncertainty of each coefficient, and each diagonal entry is capped at its start
   * value so that P cannot wind up while a feature carries no excitation (e.g. no decoding seen):
   * forgetting alone would grow P without bound along unexcited directions.
   */

  private final double[] theta;
  private final double[][] p;
  private final double[] pCap;
  private final double forgetting;
  private final double outlierSigmas;
  private final double[] gain = new double[EngineTiming.SIZE];
  private final double[] pPhi = new double[EngineTiming.SIZE];
  private double residualVariance;
  private long observations;

  /**
   * @param prior the starting coefficients
   * @param relativeUncertainty prior standard deviation of each coefficient, as a fraction of it
   * @param forgetting λ in (0, 1]
   * @param outlierSigmas residuals are clipped at this many running standard deviations
   */
  TimingFit(
      EngineTiming prior, double relativeUncertainty, double forgetting, double outlierSigmas) {
    if (!(forgetting > 0 && forgetting <= 1) || !(relativeUncertainty > 0)) {
      throw new IllegalArgumentException("forgetting in (0, 1], uncertainty > 0");
    }
    this.theta = prior.toArray();
    int k = EngineTiming.SIZE;
    this.p = new double[k][k];
    this.pCap = new double[k];
    for (int i = 0; i < k; i++) {
      double sd = relativeUncertainty * Math.max(Math.abs(theta[i]), 1e-3);
      p[i][i] = sd * sd;
      pCap[i] = p[i][i];
    }
    this.forgetting = forgetting;
    this.outlierSigmas = outlierSigmas;
  }

  /** The coefficients fitted so far (the prior before any observation). */
  EngineTiming current() {
    return EngineTiming.of(theta);
  }

  long observations() {
    return observations;
  }

  /** One observation: features {@code phi} led to a first token after {@code millis}. */
  void observe(double[] phi, double millis) {
    if (!(millis >= 0) || Double.isInfinite(millis)) {
      return;
    }
    int k = EngineTiming.SIZE;
    double predicted = 0;
    for (int i = 0; i < k; i++) {
      predicted += theta[i] * phi[i];
    }
    double error = millis - predicted;
    if (observations > 10) {
      double bound = outlierSigmas * Math.sqrt(residualVariance);
      error = Math.max(-bound, Math.min(bound, error));
    }
    residualVariance =
        observations == 0 ? error * error : 0.98 * residualVariance + 0.02 * error * error;
    double denominator = forgetting;
    for (int i = 0; i < k; i++) {
      double s = 0;
      for (int j = 0; j < k; j++) {
        s += p[i][j] * phi[j];
      }
      pPhi[i] = s;
      denominator += phi[i] * s;
    }
    for (int i = 0; i < k; i++) {
      gain[i] = pPhi[i] / denominator;
      theta[i] += gain[i] * error;
    }
    // P = (P - k (Pφ)ᵀ) / λ; P stays symmetric since (φᵀP)ᵀ = Pφ.
    for (int i = 0; i < k; i++) {
      for (int j = 0; j < k; j++) {
        p[i][j] = (p[i][j] - gain[i] * pPhi[j]) / forgetting;
      }
    }
    for (int i = 0; i < k; i++) {
      if (p[i][i] > pCap[i]) {
        double scale = Math.sqrt(pCap[i] / p[i][i]);
        for (int j = 0; j < k; j++) {
          p[i][j] *= scale;
          p[j][i] *= scale;
        }
      }
    }
    observations++;
  }
}
