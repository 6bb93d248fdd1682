package io.kvrouter.loadtest.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.ReferenceCountUtil;
import java.net.URI;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What a different HTTP layer would cost on the ingress's data path: a reverse proxy on Netty that
 * only relays, as nginx does in {@code load-tests/bench/overhead.sh} (one worker thread, one
 * kept-alive upstream connection per client connection, the response flushed as each piece arrives,
 * so a stream goes through chunk by chunk). Request and response are relayed as Netty's decoded
 * HTTP objects (head, then body pieces) and encoded again on the other side; the request's {@code
 * Host} is set to the upstream's. The upstream connection runs on the client connection's event
 * loop, so a streamed chunk crosses no thread.
 *
 * <p>A measuring instrument, not a product component: no backpressure beyond the sockets' own, no
 * retry, no pipelining (the bench sends one request at a time per connection, as HTTP/1.1 clients
 * do), and a failure closes both connections.
 *
 * <p>Usage: {@code java -cp kvrouter-all.jar io.kvrouter.loadtest.bench.NettyRelayProxy --port P
 * --upstream http://127.0.0.1:E [--host 127.0.0.1] [--threads 1]}.
 */
public final class NettyRelayProxy implements AutoCloseable {

  private final EventLoopGroup group;

  private NettyRelayProxy(EventLoopGroup group) {
    this.group = group;
  }

  public static void main(String[] args) throws InterruptedException {
    Map<String, String> a =
        OptionPairs.parse(
            args,
            "NettyRelayProxy --port P --upstream http://127.0.0.1:E [--host 127.0.0.1]"
                + " [--threads 1]",
            "--port",
            "--upstream");
    String host = a.getOrDefault("--host", "127.0.0.1");
    int port = Integer.parseInt(a.get("--port"));
    URI upstream = URI.create(a.get("--upstream"));
    start(host, port, upstream, Integer.parseInt(a.getOrDefault("--threads", "1")));
    System.out.println("Netty relay on " + host + ":" + port + " -> " + upstream);
  }

  /**
   * Binds the relay on {@code host:port} with {@code threads} event loops, relaying to {@code
   * upstream} ({@code http://host:port}).
   */
  public static NettyRelayProxy start(String host, int port, URI upstream, int threads)
      throws InterruptedException {
    EventLoopGroup group = new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
    try {
      new ServerBootstrap()
          .group(group)
          .channel(NioServerSocketChannel.class)
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childHandler(
              new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                  ch.pipeline().addLast(new HttpServerCodec(), new Frontend(upstream));
                }
              })
          .bind(host, port)
          .sync();
    } catch (InterruptedException | RuntimeException e) {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
      throw e;
    }
    return new NettyRelayProxy(group);
  }

  @Override
  public void close() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** One client connection: relays its requests to its own upstream connection. */
  private static final class Frontend extends ChannelInboundHandlerAdapter {
    private final URI upstream;
    private final String hostHeader;
    private Channel backend;
    // Request pieces that arrived before the upstream connection was up.
    private final ArrayDeque<Object> pending = new ArrayDeque<>();

    Frontend(URI upstream) {
      this.upstream = upstream;
      this.hostHeader = upstream.getHost() + ":" + upstream.getPort();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      Channel front = ctx.channel();
      ChannelFuture connect =
          NettyUpstreamClient.connectHttp(front.eventLoop(), upstream, () -> new Backend(front));
      backend = connect.channel();
      connect.addListener(
          (ChannelFutureListener)
              f -> {
                if (!f.isSuccess()) {
                  front.close();
                  return;
                }
                while (!pending.isEmpty()) {
                  backend.write(pending.poll());
                }
                backend.flush();
              });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof HttpRequest request) {
        request.headers().set(HttpHeaderNames.HOST, hostHeader);
      }
      if (backend.isActive()) {
        backend.writeAndFlush(msg);
      } else if (backend.isOpen()) {
        pending.add(msg);
      } else {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      pending.forEach(ReferenceCountUtil::release);
      pending.clear();
      backend.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  /** The upstream side of one client connection: relays every response piece back as it comes. */
  private static final class Backend extends ChannelInboundHandlerAdapter {
    private final Channel front;

    Backend(Channel front) {
      this.front = front;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      front.writeAndFlush(msg);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      front.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
