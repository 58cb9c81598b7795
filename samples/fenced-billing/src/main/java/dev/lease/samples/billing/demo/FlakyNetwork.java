package dev.lease.samples.billing.demo;

import java.io.Closeable;
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
 * The network between one instance and ZooKeeper: a loopback TCP proxy that can {@link #freeze()}, holding every
 * byte in both directions without closing anything (a partition looks like silence to both ends), and
 * {@link #heal()}.
 */
final class FlakyNetwork implements Closeable {

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private boolean frozen;
    private volatile boolean closed;

    /** Starts forwarding a free loopback port to {@code target} ({@code host:port}). */
    FlakyNetwork(String target) throws IOException {
        String first = target.split(",")[0].trim();
        int colon = first.lastIndexOf(':');
        this.targetHost = first.substring(0, colon);
        this.targetPort = Integer.parseInt(first.substring(colon + 1).replaceAll("/.*", ""));
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon(this::acceptLoop, "flaky-network-accept");
    }

    /** A connect string that goes through this network. */
    String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    void freeze() {
        synchronized (gate) {
            frozen = true;
        }
    }

    void heal() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
    }

    @Override
    public void close() {
        closed = true;
        heal();
        closeQuietly(server);
        sockets.forEach(FlakyNetwork::closeQuietly);
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            }
            catch (IOException ex) {
                continue; // closed: the loop ends
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(new InetSocketAddress(targetHost, targetPort));
            }
            catch (IOException ex) {
                // The target refused: the client sees its connection closed, as it would directly.
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            sockets.add(client);
            sockets.add(upstream);
            daemon(() -> pump(client, upstream), "flaky-network-up");
            daemon(() -> pump(upstream, client), "flaky-network-down");
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[8192];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                synchronized (gate) {
                    while (frozen && !closed) {
                        gate.wait();
                    }
                }
                out.write(buffer, 0, n);
                out.flush();
            }
        }
        catch (IOException | InterruptedException ex) {
            // One side closed: close both so that the other direction ends too.
        }
        finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void daemon(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Closeable closeable) {
        try {
            closeable.close();
        }
        catch (IOException ignored) {
            // Best effort on a broken socket.
        }
    }
}
