package io.kvrouter.tracker.ledger;

/**
 * A {@link LoadView} that answers every question from another one; a subclass overrides what it
 * sees differently (the counts a gate reported, a busy headroom).
 */
abstract class ForwardingLoadView implements LoadView {

  /** The view answered from. */
  protected final LoadView inner;

  ForwardingLoadView(LoadView inner) {
    this.inner = inner;
  }

  @Override
  public String id(int replica) {
    return inner.id(replica);
  }

  @Override
  public int inFlight(int replica) {
    return inner.inFlight(replica);
  }

  @Override
  public long prefillTokens(int replica) {
    return inner.prefillTokens(replica);
  }

  @Override
  public long decodeTokens(int replica) {
    return inner.decodeTokens(replica);
  }

  @Override
  public long activeTokens(int replica) {
    return inner.activeTokens(replica);
  }

  @Override
  public int waiting(int replica) {
    return inner.waiting(replica);
  }

  @Override
  public int running(int replica) {
    return inner.running(replica);
  }

  @Override
  public double kvUsage(int replica) {
    return inner.kvUsage(replica);
  }
}
