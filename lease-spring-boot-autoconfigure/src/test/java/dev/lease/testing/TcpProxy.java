package dev.lease.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP proxy for network-fault tests: clients connect to {@link #port()} and bytes flow to the target.
 * {@link #freeze()} stops every byte in both directions without closing anything, the way a partition or a
 * stalled network looks to both ends (no RST, no FIN: only silence); {@link #unfreeze()} lets the held bytes and
 * everything after them through again. New connections made while frozen are accepted but carry nothing.
 */
public final class TcpProxy implements AutoCloseable {

    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private boolean frozen;
    private volatile boolean closed;

    /** Starts proxying a free loopback port to {@code 127.0.0.1:targetPort}. */
    public TcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The local port clients should connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** {@code 127.0.0.1:port()}, handy as a connect string. */
    public String address() {
        return "127.0.0.1:" + port();
    }

    /** Holds every byte in both directions until {@link #unfreeze()}. */
    public void freeze() {
        synchronized (gate) {
            frozen = true;
        }
    }

    /** Lets bytes flow again, starting with the ones held while frozen. */
    public void unfreeze() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
    }

    /** Closes the listening socket and every proxied connection. */
    @Override
    public void close() {
        closed = true;
        unfreeze();
        closeQuietly(server);
        sockets.forEach(TcpProxy::closeQuietly);
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            }
            catch (IOException ex) {
                continue; // closed: the loop ends; otherwise a transient accept failure
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort));
            }
            catch (IOException ex) {
                // The target refused (a stopped server): the client sees its connection closed, as it would directly.
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            sockets.add(client);
            sockets.add(upstream);
            pump(client, upstream, "up");
            pump(upstream, client, "down");
        }
    }

    private void pump(Socket from, Socket to, String direction) {
        Thread pump = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    awaitOpen();
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
            catch (IOException | InterruptedException ex) {
                // Either side closed: close both so the other direction ends too.
            }
            finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-" + direction + "-" + from.getPort());
        pump.setDaemon(true);
        pump.start();
    }

    private void awaitOpen() throws InterruptedException {
        synchronized (gate) {
            while (frozen && !closed) {
                gate.wait();
            }
        }
    }

    private static void closeQuietly(java.io.Closeable closeable) {
        try {
            closeable.close();
        }
        catch (IOException ignored) {
            // Closing a broken socket is best effort.
        }
    }
}
