package io.kvrouter.config.serialization;

import io.kvrouter.protocol.KryoWire;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** A test actor that answers a Kryo message carrying a typed ActorRef and a long[]. */
public final class Echo {

  private Echo() {}

  /** Registered as 10000 in the test application.conf. */
  public record Request(long[] values, ActorRef<Reply> replyTo) implements KryoWire {}

  /** Registered as 10001 in the test application.conf. */
  public record Reply(long sum, long[] values, String node) implements KryoWire {}

  public static Behavior<Request> create() {
    return Behaviors.receive(
        (ctx, request) -> {
          long sum = 0;
          for (long v : request.values()) {
            sum += v;
          }
          request
              .replyTo()
              .tell(new Reply(sum, request.values(), ctx.getSystem().address().toString()));
          return Behaviors.same();
        });
  }
}
