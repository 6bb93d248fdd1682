package io.kvrouter.tracker.index;

import io.kvrouter.protocol.BlocksRemoved;
import io.kvrouter.protocol.BlocksStored;

/** One random operation of the index property tests, applied to the index and the model alike. */
sealed interface IndexOp {

  void apply(PrefixIndex index);

  void apply(ReferenceIndex model);

  record Store(int replica, BlocksStored event) implements IndexOp {
    public void apply(PrefixIndex index) {
      index.store(replica, event);
    }

    public void apply(ReferenceIndex model) {
      model.store(replica, event);
    }

    @Override
    public String toString() {
      return "Store[r="
          + replica
          + ", keys="
          + java.util.Arrays.toString(event.blockKeys())
          + ", hashes="
          + java.util.Arrays.toString(event.engineHashes())
          + ", "
          + event.tier()
          + "]";
    }
  }

  record Remove(int replica, BlocksRemoved event) implements IndexOp {
    public void apply(PrefixIndex index) {
      index.remove(replica, event);
    }

    public void apply(ReferenceIndex model) {
      model.remove(replica, event);
    }

    @Override
    public String toString() {
      return "Remove[r="
          + replica
          + ", hashes="
          + java.util.Arrays.toString(event.engineHashes())
          + ", "
          + event.tier()
          + "]";
    }
  }

  record Clear(int replica) implements IndexOp {
    public void apply(PrefixIndex index) {
      index.clearReplica(replica);
    }

    public void apply(ReferenceIndex model) {
      model.clear(replica);
    }
  }

  record Drop(int replica) implements IndexOp {
    public void apply(PrefixIndex index) {
      index.dropReplica(replica);
    }

    public void apply(ReferenceIndex model) {
      model.drop(replica);
    }
  }

  record Predict(int replica, long[] keys, long deadline) implements IndexOp {
    public void apply(PrefixIndex index) {
      index.predict(replica, keys, 0, keys.length, deadline);
    }

    public void apply(ReferenceIndex model) {
      model.predict(replica, keys, deadline);
    }

    @Override
    public String toString() {
      return "Predict[r="
          + replica
          + ", keys="
          + java.util.Arrays.toString(keys)
          + ", until="
          + deadline
          + "]";
    }
  }

  record Expire(long now) implements IndexOp {
    public void apply(PrefixIndex index) {
      index.expirePredicted(now);
    }

    public void apply(ReferenceIndex model) {
      model.expire(now);
    }
  }
}
