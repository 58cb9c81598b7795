package dev.lease.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A loopback TCP proxy for network-fault tests: clients connect to {@link #port()} and bytes flow to the target.
 * {@link #freeze()} stops every byte in both directions without closing anything, the way a partition or a
 * stalled network looks to both ends (no RST, no FIN: only silence); {@link #unfreeze()} lets the held bytes and
 * everything after them through again. New connections made while frozen are accepted but carry nothing.
 *
 * <p>The other faults: {@link #delay(Duration)} holds every chunk for a while before forwarding it (a slow link),
 * {@link #drop(boolean)} silently discards bytes in both directions (a lossy partition: unlike a freeze, what was
 * sent meanwhile never arrives, so both ends eventually see a broken stream), and {@link #reset()} aborts every
 * current connection with a TCP RST, as a restarting peer or a firewall would; new connections are accepted again.
 */
public final class TcpProxy implements AutoCloseable {

    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private boolean frozen;
    private volatile boolean closed;
    private volatile long delayNanos;
    private volatile boolean dropping;
    private volatile byte[] marker;
    private volatile long markedDelayNanos;

    /** Starts proxying a free loopback port to {@code 127.0.0.1:targetPort}. */
    public TcpProxy(int targetPort) throws IOException {
        this(0, targetPort);
    }

    /**
     * Starts proxying loopback {@code port}, which must be free, to {@code 127.0.0.1:targetPort}: for a server that
     * must be told the proxy's address before it starts (a Kafka broker advertising it), and whose own port is known
     * only after.
     */
    public static TcpProxy onPort(int port, int targetPort) throws IOException {
        return new TcpProxy(port, targetPort);
    }

    private TcpProxy(int port, int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
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

    /** Holds every chunk for {@code delay} before forwarding it; {@link Duration#ZERO} stops delaying. */
    public void delay(Duration delay) {
        this.delayNanos = delay.toNanos();
    }

    /** While {@code drop} is true, bytes in both directions are read and thrown away. */
    public void drop(boolean drop) {
        this.dropping = drop;
    }

    /**
     * Holds the first reply chunk that follows a request chunk containing {@code marker} for {@code delay}, on each
     * connection: with {@code "COMMIT"} the database commits at once but the client hears of it late (or, past its
     * socket timeout, never), so its outcome is unknown while the row is there. {@code null} stops it.
     */
    public void delayReplyAfter(byte[] marker, Duration delay) {
        this.markedDelayNanos = delay.toNanos();
        this.marker = marker;
    }

    /**
     * Aborts every connection proxied so far with a TCP RST (no FIN, no goodbye), like a peer that crashed and came
     * back; clients reconnecting afterwards get through.
     */
    public void reset() {
        for (Socket socket : sockets) {
            try {
                socket.setSoLinger(true, 0);
            }
            catch (SocketException ignored) {
                // Already closed: nothing to reset.
            }
            closeQuietly(socket);
        }
        sockets.clear();
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
            AtomicBoolean marked = new AtomicBoolean();
            pump(client, upstream, "up", marked);
            pump(upstream, client, "down", marked);
        }
    }

    private void pump(Socket from, Socket to, String direction, AtomicBoolean marked) {
        Thread pump = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    awaitOpen();
                    if (dropping) {
                        continue;
                    }
                    long delay = delayNanos;
                    byte[] mark = marker;
                    if (mark != null && direction.equals("up") && contains(buffer, n, mark)) {
                        marked.set(true);
                    }
                    else if (direction.equals("down") && marked.getAndSet(false) && mark != null) {
                        delay += markedDelayNanos;
                    }
                    if (delay > 0) {
                        Thread.sleep(delay / 1_000_000, (int) (delay % 1_000_000));
                    }
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
                // A long run opens many connections: closed ones must not pile up.
                sockets.remove(from);
                sockets.remove(to);
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

    private static boolean contains(byte[] buffer, int length, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (buffer[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
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
