package io.kvrouter.systemtest.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One request's ext_proc stream, as Envoy opens it to the endpoint picker: what the test sends goes
 * out in order, and each reply (or the stream's error) is awaited in turn.
 */
public final class ExtProcStream implements AutoCloseable {

  private final LinkedBlockingQueue<Object> in = new LinkedBlockingQueue<>();
  private final StreamObserver<ProcessingRequest> out;

  public ExtProcStream(ExternalProcessorGrpc.ExternalProcessorStub stub) {
    out =
        stub.process(
            new StreamObserver<>() {
              @Override
              public void onNext(ProcessingResponse r) {
                in.add(r);
              }

              @Override
              public void onError(Throwable t) {
                in.add(t);
              }

              @Override
              public void onCompleted() {}
            });
  }

  /** Sends {@code request} on the stream. */
  public void send(ProcessingRequest request) {
    out.onNext(request);
  }

  /** The picker's next reply; fails the test on an error or after 30 s without one. */
  public ProcessingResponse next() throws InterruptedException {
    Object r = in.poll(30, TimeUnit.SECONDS);
    assertThat(r).as("the picker answered").isInstanceOf(ProcessingResponse.class);
    return (ProcessingResponse) r;
  }

  /** Ends the request's stream, as Envoy does once the request is done. */
  @Override
  public void close() {
    out.onCompleted();
  }
}
