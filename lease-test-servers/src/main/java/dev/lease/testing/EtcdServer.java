package dev.lease.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;

/**
 * Throwaway etcd servers: Debian's {@code etcd} binary as child processes, one member or a cluster of several, each on
 * free ports of 127.0.0.1 with a data directory of its own (on {@code /dev/shm} when there is one: etcd fsyncs every
 * write, and the disk is shared) that {@link #close()} deletes. Members can be killed, restarted on the same ports and
 * data, and paused for real ({@code kill -STOP}); with {@link #startWithPeerLinks} the members also talk to one another
 * through a {@link TcpProxy} per member, whose link can be frozen ({@link #peerLink}). Tests on a machine without the {@code etcd-server} package are
 * skipped with the command that installs it: annotate the class with
 * {@code @EnabledIf(value = EtcdServer.INSTALLED, disabledReason = EtcdServer.NOT_INSTALLED)}, or just call
 * {@link #start(int)}, which skips the calling tests by an assumption.
 */
public final class EtcdServer implements AutoCloseable {

    /** The condition for {@code @EnabledIf}. */
    public static final String INSTALLED = "dev.lease.testing.EtcdServer#installed";

    /** Why tests are skipped without it. */
    public static final String NOT_INSTALLED = "etcd is not installed (no etcd binary): install it with "
            + "'apt-get install -y etcd-server' (.ci/run does) to run the etcd tests";

    private static final List<String> BIN_DIRS = List.of("/usr/bin", "/usr/local/bin", "/usr/sbin");

    private final Path binary;
    private final Path dir;
    private final List<Member> members;
    private final String initialCluster;
    private final String clusterToken = "lease-test-" + UUID.randomUUID();
    private final Thread cleanup;

    private EtcdServer(Path binary, Path dir, int size, boolean peerLinks) throws IOException {
        this.binary = binary;
        this.dir = dir;
        List<Member> list = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            int peerPort = freePort();
            list.add(new Member("m" + i, freePort(), peerPort, dir.resolve("m" + i),
                    peerLinks ? new TcpProxy(peerPort) : null));
        }
        this.members = List.copyOf(list);
        this.initialCluster = members.stream().map(m -> m.name + "=" + m.advertisedPeerUrl())
                .collect(Collectors.joining(","));
        this.cleanup = new Thread(this::stop, "etcd-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanup);
    }

    /** Starts a cluster of {@code size} members and waits until every member reports itself healthy (a leader is known). */
    public static EtcdServer start(int size) throws IOException, InterruptedException {
        return start(size, false);
    }

    /**
     * Starts a cluster of {@code size} members that reach one another through a proxy per member: each member
     * advertises its proxy's port as its peer URL, so every connection made to a member by its peers (the raft streams
     * it sends its messages on, the requests the others post to it) goes through that member's {@link #peerLink}.
     */
    public static EtcdServer startWithPeerLinks(int size) throws IOException, InterruptedException {
        return start(size, true);
    }

    private static EtcdServer start(int size, boolean peerLinks) throws IOException, InterruptedException {
        Optional<Path> found = binary();
        Assumptions.assumeTrue(found.isPresent(), NOT_INSTALLED);
        Path base = Files.isDirectory(Path.of("/dev/shm")) && Files.isWritable(Path.of("/dev/shm"))
                ? Files.createTempDirectory(Path.of("/dev/shm"), "lease-etcd")
                : Files.createTempDirectory("lease-etcd");
        EtcdServer server = new EtcdServer(found.get(), base, size, peerLinks);
        try {
            for (int i = 0; i < size; i++) {
                server.startMember(i);
            }
            for (int i = 0; i < size; i++) {
                server.awaitHealthy(i, TestTiming.seconds(60));
            }
            return server;
        }
        catch (IOException | InterruptedException | RuntimeException ex) {
            String logs = server.logs();
            server.close();
            throw new IllegalStateException("etcd did not start: " + ex + "\n" + logs, ex);
        }
    }

    /** The number of members. */
    public int size() {
        return members.size();
    }

    /** Every member's client URL, comma-separated, as {@code lease.etcd.endpoints} takes them. */
    public String endpoints() {
        return members.stream().map(m -> url(m.clientPort)).collect(Collectors.joining(","));
    }

    /** Member {@code i}'s client URL, such as {@code http://127.0.0.1:2379}. */
    public String endpoint(int i) {
        return url(members.get(i).clientPort);
    }

    /** Member {@code i}'s client port, e.g. for a proxy in front of it. */
    public int clientPort(int i) {
        return members.get(i).clientPort;
    }

    /** The URL of a client port, e.g. a proxy's. */
    public static String url(int port) {
        return "http://127.0.0.1:" + port;
    }

    /**
     * The proxy in front of member {@code i}'s peer port ({@link #startWithPeerLinks}). Frozen, it holds what member
     * {@code i} sends its peers (etcd sends a member's raft messages on the streams its peers opened to it) and what
     * they post to it, while it still hears them on the streams it opened to them: a member cut off one way.
     *
     * @throws IllegalStateException when the cluster was started without peer links
     */
    public TcpProxy peerLink(int i) {
        TcpProxy link = members.get(i).peerLink;
        if (link == null) {
            throw new IllegalStateException("etcd member " + i + " has no peer link: start the cluster with "
                    + "EtcdServer.startWithPeerLinks");
        }
        return link;
    }

    /** Member {@code i}'s process id, to pause it for real. */
    public long pid(int i) {
        return members.get(i).process.pid();
    }

    /** Kills member {@code i} at once ({@code SIGKILL}): no goodbye to its peers or clients. */
    public void kill(int i) throws InterruptedException {
        Process process = members.get(i).process;
        process.destroyForcibly();
        process.waitFor(TestTiming.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Starts member {@code i} again after {@link #kill}, on the same ports and data, and waits until it is healthy. */
    public void restart(int i) throws IOException, InterruptedException {
        startMember(i);
        awaitHealthy(i, TestTiming.seconds(60));
    }

    /** Stops member {@code i} where it stands ({@code kill -STOP}): its sockets stay open and silent. */
    public void pause(int i) throws IOException, InterruptedException {
        Signals.send("STOP", pid(i));
    }

    /** Lets member {@code i} go on after {@link #pause} ({@code kill -CONT}). */
    public void resume(int i) throws IOException, InterruptedException {
        Signals.send("CONT", pid(i));
    }

    /**
     * The index of the member that member {@code asked} names as the raft leader now (etcd's gRPC gateway,
     * {@code /v3/maintenance/status}), so that a test can pause a follower and keep the quorum's leader.
     *
     * @throws IllegalStateException when the member knows no leader, or no member that answers has its id
     * @throws IOException when the asked member does not answer
     */
    public int leader(int asked) throws IOException {
        String leader = EtcdHttp.leaderId(endpoint(asked));
        for (int i = 0; i < members.size(); i++) {
            Optional<String> own = EtcdHttp.memberId(endpoint(i));
            // A paused (kill -STOP) member does not answer; it is not the leader the asked member names.
            if (own.isPresent() && own.get().equals(leader)) {
                return i;
            }
        }
        throw new IllegalStateException("no member has the leader's id " + leader + " that member " + asked
                + " names");
    }

    /**
     * Every request message member {@code i} has received: the sum of {@code grpc_server_msg_received_total} on its
     * metrics endpoint (a unary call is one, a keep-alive on a stream one per request, HTTP/2 pings none).
     */
    public long receivedRequests(int i) throws IOException {
        return EtcdHttp.receivedRequests(endpoint(i));
    }

    /** Whether member {@code i} answers {@code /health} with {@code true} now (it is up and knows a leader). */
    public boolean healthy(int i) {
        return EtcdHttp.healthy(endpoint(i));
    }

    /** Stops every member and deletes the data. */
    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        }
        catch (IllegalStateException shuttingDown) {
            // The hook is running or has run: nothing left to undo.
        }
    }

    private void startMember(int i) throws IOException {
        Member m = members.get(i);
        Files.createDirectories(m.dir);
        boolean fresh = !Files.exists(m.dir.resolve("data"));
        List<String> command = new ArrayList<>(List.of(binary.toString(),
                "--name", m.name,
                "--data-dir", m.dir.resolve("data").toString(),
                "--listen-client-urls", url(m.clientPort),
                "--advertise-client-urls", url(m.clientPort),
                "--listen-peer-urls", "http://127.0.0.1:" + m.peerPort,
                "--initial-advertise-peer-urls", m.advertisedPeerUrl(),
                "--initial-cluster", initialCluster,
                "--initial-cluster-token", clusterToken,
                "--initial-cluster-state", fresh ? "new" : "existing",
                "--log-level", "warn",
                "--logger", "zap"));
        m.process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(m.dir.resolve("etcd.log").toFile())).start();
    }

    private void awaitHealthy(int i, Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!healthy(i)) {
            Process process = members.get(i).process;
            if (!process.isAlive()) {
                throw new IllegalStateException("etcd member " + i + " exited with status " + process.exitValue());
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("etcd member " + i + " not healthy within " + bound);
            }
            Thread.sleep(50);
        }
    }

    private String logs() {
        StringBuilder all = new StringBuilder();
        for (Member m : members) {
            Path log = m.dir.resolve("etcd.log");
            try {
                all.append("--- ").append(m.name).append('\n')
                        .append(Files.exists(log) ? Files.readString(log) : "(no log)").append('\n');
            }
            catch (IOException ex) {
                all.append("(log unreadable: ").append(ex).append(")\n");
            }
        }
        return all.toString();
    }

    private synchronized void stop() {
        if (!Files.exists(dir)) {
            return;
        }
        for (Member m : members) {
            Process process = m.process;
            if (process == null) {
                continue;
            }
            try {
                // A paused member ignores SIGTERM until it runs again.
                Signals.send("CONT", process.pid());
            }
            catch (IOException | InterruptedException | RuntimeException ignored) {
                // Not running any more: nothing to wake.
            }
            process.destroyForcibly();
        }
        for (Member m : members) {
            if (m.process != null) {
                try {
                    m.process.waitFor(30, TimeUnit.SECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        for (Member m : members) {
            if (m.peerLink != null) {
                m.peerLink.close();
            }
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * Whether the etcd binary is installed; for {@code @EnabledIf}, which unlike an assumption failing in
     * {@code @BeforeAll} shows up in Surefire's report as skipped tests with their reason.
     */
    public static boolean installed() {
        return binary().isPresent();
    }

    private static Optional<Path> binary() {
        return Stream.concat(Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)),
                BIN_DIRS.stream()).filter(d -> !d.isEmpty()).map(d -> Path.of(d, "etcd")).filter(Files::isExecutable)
                .findFirst();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static final class Member {
        final String name;
        final int clientPort;
        final int peerPort;
        final Path dir;
        /** The proxy its peers reach it through, or null. */
        final TcpProxy peerLink;
        volatile Process process;

        Member(String name, int clientPort, int peerPort, Path dir, TcpProxy peerLink) {
            this.name = name;
            this.clientPort = clientPort;
            this.peerPort = peerPort;
            this.dir = dir;
            this.peerLink = peerLink;
        }

        /** The peer URL the others know it by: its proxy's, when it has one. */
        String advertisedPeerUrl() {
            return "http://127.0.0.1:" + (peerLink == null ? peerPort : peerLink.port());
        }
    }

    /** {@code kill -SIG pid}, since Java sends only TERM and KILL. */
    private static final class Signals {

        static void send(String signal, long pid) throws IOException, InterruptedException {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed");
            }
        }
    }
}
