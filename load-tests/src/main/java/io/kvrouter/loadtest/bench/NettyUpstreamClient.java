package io.kvrouter.loadtest.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.net.URI;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.QueueOfferResult;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * A measuring instrument for {@link BarePekkoProxy}'s {@code --client netty}: the upstream side of
 * a Pekko HTTP server's relay on Netty instead of Pekko HTTP's host connection pool. Each
 * response's body pieces go from the Netty event loop straight into a Pekko stream source (a
 * bounded queue) that the server relays, so a streamed chunk crosses the Netty thread and the
 * server's stream only, instead of the client connection's TCP actor, its stream and the pool's as
 * well.
 *
 * <p>Idle kept-alive connections are reused, one request at a time each. Not a product component:
 * no backpressure beyond the queue's bound (a body that overflows it fails), no timeouts, no TLS.
 */
final class NettyUpstreamClient implements AutoCloseable {

  private static final int QUEUE = 4096;

  private final EventLoopGroup group;
  private final Materializer materializer;
  private final URI upstream;
  private final String hostHeader;
  private final ConcurrentLinkedDeque<Channel> idle = new ConcurrentLinkedDeque<>();

  NettyUpstreamClient(URI upstream, int threads, Materializer materializer) {
    this.group = new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
    this.materializer = materializer;
    this.upstream = upstream;
    this.hostHeader = upstream.getHost() + ":" + upstream.getPort();
  }

  /** Sends {@code body} to {@code pathAndQuery}; completes when the response's head arrives. */
  CompletionStage<HttpResponse> send(
      String method, String pathAndQuery, String contentType, byte[] body) {
    CompletableFuture<HttpResponse> response = new CompletableFuture<>();
    DefaultFullHttpRequest request =
        new DefaultFullHttpRequest(
            HttpVersion.HTTP_1_1,
            HttpMethod.valueOf(method),
            pathAndQuery,
            Unpooled.wrappedBuffer(body));
    request.headers().set(HttpHeaderNames.HOST, hostHeader);
    if (contentType != null) {
      request.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
    }
    HttpUtil.setContentLength(request, body.length);
    Channel channel;
    while ((channel = idle.pollFirst()) != null) {
      if (channel.isActive()) {
        start(channel, request, response);
        return response;
      }
    }
    connectHttp(group, upstream, Exchange::new)
        .addListener(
            (ChannelFutureListener)
                f -> {
                  if (f.isSuccess()) {
                    start(f.channel(), request, response);
                  } else {
                    request.release();
                    response.completeExceptionally(f.cause());
                  }
                });
    return response;
  }

  /**
   * Opens an HTTP/1.1 client connection to {@code upstream} on {@code loop} ({@code TCP_NODELAY}),
   * its responses handed to a new {@code handler} after the codec: the connection both bench relays
   * open upstream.
   */
  static ChannelFuture connectHttp(
      EventLoopGroup loop, URI upstream, Supplier<? extends ChannelHandler> handler) {
    return new Bootstrap()
        .group(loop)
        .channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .handler(
            new ChannelInitializer<SocketChannel>() {
              @Override
              protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(new HttpClientCodec(), handler.get());
              }
            })
        .connect(upstream.getHost(), upstream.getPort());
  }

  private void start(
      Channel channel, DefaultFullHttpRequest request, CompletableFuture<HttpResponse> response) {
    channel.pipeline().get(Exchange.class).response = response;
    channel.writeAndFlush(request);
  }

  @Override
  public void close() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** One connection's current exchange: the head completes the future, the body feeds a queue. */
  private final class Exchange extends SimpleChannelInboundHandler<HttpObject> {
    CompletableFuture<HttpResponse> response;
    private BoundedSourceQueue<ByteString> queue;
    private boolean keepAlive;

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
      if (msg instanceof io.netty.handler.codec.http.HttpResponse head) {
        keepAlive = HttpUtil.isKeepAlive(head);
        Pair<BoundedSourceQueue<ByteString>, Source<ByteString, NotUsed>> q =
            Source.<ByteString>queue(QUEUE).preMaterialize(materializer);
        queue = q.first();
        String type = head.headers().get(HttpHeaderNames.CONTENT_TYPE);
        ContentType ct =
            type == null ? ContentTypes.APPLICATION_OCTET_STREAM : ContentTypes.parse(type);
        response.complete(
            HttpResponse.create()
                .withStatus(head.status().code())
                .withEntity(HttpEntities.create(ct, q.second())));
      }
      if (msg instanceof HttpContent content && queue != null) {
        ByteBuf buf = content.content();
        if (buf.isReadable()) {
          byte[] bytes = new byte[buf.readableBytes()];
          buf.readBytes(bytes);
          if (queue.offer(ByteString.fromArrayUnsafe(bytes)) != QueueOfferResult.enqueued()) {
            queue.fail(new IllegalStateException("response body overflowed the relay queue"));
            ctx.close();
            return;
          }
        }
        if (msg instanceof LastHttpContent) {
          queue.complete();
          queue = null;
          if (keepAlive) {
            idle.addFirst(ctx.channel());
          } else {
            ctx.close();
          }
        }
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      if (queue != null) {
        queue.fail(new IllegalStateException("upstream closed the connection mid-response"));
      }
      if (response != null && !response.isDone()) {
        response.completeExceptionally(new IllegalStateException("upstream closed"));
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
