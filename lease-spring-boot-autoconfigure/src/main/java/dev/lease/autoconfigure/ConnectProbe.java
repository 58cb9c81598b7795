package dev.lease.autoconfigure;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.lease.LeaseConfigurationException;

/**
 * Opens a TCP connection to every address of a list at once, to tell before a client starts whether any server
 * listens at all. A client would retry a refused connection for its whole connection timeout, logging each attempt
 * with a stack trace; when every address refuses at once there is nothing to wait for.
 */
final class ConnectProbe {

    private ConnectProbe() {
    }

    /**
     * Why every server failed, when every one of them failed for a reason other than silence: an unresolvable host
     * calls for another fix than a server that refuses the connection.
     *
     * @param unresolved each server whose host resolves to no address
     * @param refused why each address of the other servers failed
     */
    record Failures(List<InetSocketAddress> unresolved, List<String> refused) {

        static final Failures NONE = new Failures(List.of(), List.of());

        boolean isEmpty() {
            return unresolved.isEmpty() && refused.isEmpty();
        }

        /**
         * The startup failure for a store none of whose servers could be reached: an unresolvable host name wants
         * another fix than a store that is down.
         *
         * @param store the store as the message names it, such as {@code ZooKeeper}
         * @param at the configured servers as written
         * @param server what one server is called, such as {@code server} or {@code endpoint}
         * @param property the property that lists the servers
         * @param start how to start the store, such as {@code start the ensemble}
         */
        LeaseConfigurationException unreachable(String store, String at, String server, String property,
                String start) {
            String problem = "Could not connect to " + store + " at '" + at + "': ";
            if (unresolved.isEmpty()) {
                return new LeaseConfigurationException(problem + "every " + server + " refused the connection ("
                        + String.join(", ", refused) + ").", start + ", or fix " + property + ".");
            }
            List<String> hosts = unresolved.stream().map(InetSocketAddress::getHostString).distinct().toList();
            String notResolving = (hosts.size() == 1 ? "the host '" + hosts.get(0) + "' does not resolve"
                    : "the hosts '" + String.join("', '", hosts) + "' do not resolve") + " to any address (unknown host)";
            String fix = "correct the host name in " + property + ", or make it resolvable from this machine "
                    + "(DNS, /etc/hosts)";
            if (refused.isEmpty()) {
                return new LeaseConfigurationException(problem + notResolving + ".", fix + ".");
            }
            return new LeaseConfigurationException(problem + notResolving + ", and every other " + server
                    + " refused the connection (" + String.join(", ", refused) + ").", fix + ", and " + start + ".");
        }
    }

    /**
     * @param addresses host and port of each server, resolved here (a host name may have several addresses)
     * @param timeout how long to wait for an answer
     * @return why each server failed, when every one of them failed for a reason other than silence; {@link
     *         Failures#NONE} when some address accepted or did not answer within {@code timeout}, so that only a
     *         client can tell
     */
    static Failures probe(List<InetSocketAddress> addresses, Duration timeout) {
        List<InetSocketAddress> unresolved = new ArrayList<>();
        List<String> refused = new ArrayList<>();
        List<SocketChannel> channels = new ArrayList<>();
        try (Selector selector = Selector.open()) {
            int pending = 0;
            for (InetSocketAddress server : addresses) {
                InetAddress[] resolved;
                try {
                    resolved = InetAddress.getAllByName(server.getHostString());
                }
                catch (UnknownHostException ex) {
                    unresolved.add(server);
                    continue;
                }
                for (InetAddress address : resolved) {
                    InetSocketAddress target = new InetSocketAddress(address, server.getPort());
                    SocketChannel channel = SocketChannel.open();
                    channels.add(channel);
                    channel.configureBlocking(false);
                    try {
                        if (channel.connect(target)) {
                            return Failures.NONE;
                        }
                        channel.register(selector, SelectionKey.OP_CONNECT, target);
                        pending++;
                    }
                    catch (IOException ex) {
                        refused.add(describe(target, ex));
                    }
                }
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            while (pending > 0) {
                long remainingMillis = (deadline - System.nanoTime()) / 1_000_000;
                if (remainingMillis <= 0) {
                    return Failures.NONE;
                }
                selector.select(remainingMillis);
                for (SelectionKey key : selector.selectedKeys()) {
                    key.cancel();
                    pending--;
                    try {
                        ((SocketChannel) key.channel()).finishConnect();
                        return Failures.NONE;
                    }
                    catch (IOException ex) {
                        refused.add(describe((InetSocketAddress) key.attachment(), ex));
                    }
                }
                selector.selectedKeys().clear();
            }
            return new Failures(unresolved, refused);
        }
        catch (IOException ex) {
            // The probe itself could not run: leave the judgement to the client.
            return Failures.NONE;
        }
        finally {
            for (SocketChannel channel : channels) {
                try {
                    channel.close();
                }
                catch (IOException ex) {
                    // Nothing was sent on it; nothing to clean up.
                }
            }
        }
    }

    private static String describe(InetSocketAddress target, IOException ex) {
        return target.getHostString() + ":" + target.getPort() + " (" + ex.getMessage() + ")";
    }
}
