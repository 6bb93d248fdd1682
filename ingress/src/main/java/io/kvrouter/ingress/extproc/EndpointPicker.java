package io.kvrouter.ingress.extproc;

import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.stub.StreamObserver;
import io.kvrouter.ingress.routing.Router;
import java.util.UUID;

/**
 * Envoy's {@code envoy.service.ext_proc.v3.ExternalProcessor} service as a Gateway API Inference
 * Extension endpoint picker: each {@code Process} stream is one HTTP request, handled by its own
 * {@link PickerStream}.
 */
final class EndpointPicker extends ExternalProcessorGrpc.ExternalProcessorImplBase {

  private final PromptDecoder decoder;
  private final Router router;
  private final long maxBodyBytes;
  private final DestinationReplies replies = new DestinationReplies();

  EndpointPicker(PromptDecoder decoder, Router router, long maxBodyBytes) {
    this.decoder = decoder;
    this.router = router;
    this.maxBodyBytes = maxBodyBytes;
  }

  @Override
  public StreamObserver<ProcessingRequest> process(
      StreamObserver<ProcessingResponse> responseObserver) {
    return new PickerStream(
        responseObserver, replies, decoder, router, maxBodyBytes, "epp-" + UUID.randomUUID());
  }
}
