package dev.lease.redis;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Wakes threads waiting for a busy lease when the release script announces that lease on the release channel.
 * One subscription serves every waiter of the backend; it is opened on the first wait, so that an application
 * that never waits holds no subscriber connection.
 *
 * <p>A missed message (not yet subscribed, connection dropped) only costs the waiter its engine backoff pause.
 */
final class ReleaseSignals implements MessageListener, AutoCloseable {

    private static final Log log = LogFactory.getLog(ReleaseSignals.class);

    private static final int OPEN = 0;
    private static final int STARTING = 1;
    private static final int STARTED = 2;
    private static final int CLOSED = 3;

    private final RedisConnectionFactory connectionFactory;
    private final String channel;
    private final Map<String, Set<CountDownLatch>> waiters = new ConcurrentHashMap<>();

    /** Written under this object's lock by {@link #subscribe}; read without it by {@link #close}. */
    private volatile RedisMessageListenerContainer container;
    /**
     * OPEN, STARTING (a thread is in the container's {@code start()}), STARTED or CLOSED. Every container has a
     * starting thread, and until its start has ended only that thread may destroy it: a destroy during the start would
     * find no subscription to end yet, and the start would then open one nobody closes.
     */
    private final AtomicInteger state = new AtomicInteger(OPEN);

    ReleaseSignals(RedisConnectionFactory connectionFactory, String channel) {
        this.connectionFactory = connectionFactory;
        this.channel = channel;
    }

    /** Registers interest in {@code name}; the latch opens on its next release. Pair with {@link #forget}. */
    CountDownLatch watch(String name) {
        CountDownLatch latch = new CountDownLatch(1);
        watch(name, latch);
        return latch;
    }

    /**
     * Registers {@code latch} for {@code name}: each release announced on this channel counts it down once, so one
     * latch shared by the signals of several servers opens once enough of them announced (Redlock's majority).
     * Pair with {@link #forget}.
     */
    void watch(String name, CountDownLatch latch) {
        subscribe();
        // Added inside compute: a concurrent forget() must not drop the set this latch is being added to.
        waiters.compute(name, (n, set) -> {
            Set<CountDownLatch> latches = set != null ? set : ConcurrentHashMap.newKeySet();
            latches.add(latch);
            return latches;
        });
    }

    void forget(String name, CountDownLatch latch) {
        waiters.computeIfPresent(name, (n, set) -> {
            set.remove(latch);
            return set.isEmpty() ? null : set;
        });
    }

    @Override
    public void onMessage(Message message, byte[] pattern) {
        String name = new String(message.getBody(), StandardCharsets.UTF_8);
        Set<CountDownLatch> latches = waiters.get(name);
        if (latches != null) {
            latches.forEach(CountDownLatch::countDown);
        }
    }

    private synchronized void subscribe() {
        if (container != null || state.get() == CLOSED) {
            return;
        }
        RedisMessageListenerContainer created = new RedisMessageListenerContainer();
        created.setConnectionFactory(connectionFactory);
        created.setBeanName("lease-redis-release-signals");
        created.addMessageListener(this, new ChannelTopic(channel));
        // By default each message is dispatched on a new thread: a thread start on every handover. onMessage only
        // opens latches, so it runs on the client's own thread. A blocking client (Jedis) keeps its subscription on
        // a thread of its own.
        created.setTaskExecutor(Runnable::run);
        SimpleAsyncTaskExecutor subscriptions = new SimpleAsyncTaskExecutor("lease-redis-release-subscriber-");
        subscriptions.setDaemon(true);
        created.setSubscriptionExecutor(subscriptions);
        created.afterPropertiesSet();
        container = created;
        // Starting waits for the subscription to be confirmed (up to the container's registration time, 2 s by
        // default): a waiter must not, since its wait is bounded by its deadline. It misses at most the releases
        // announced meanwhile, which only costs it its backoff pause.
        Thread starting = new Thread(() -> start(created), "lease-redis-release-subscription");
        starting.setDaemon(true);
        starting.start();
    }

    private void start(RedisMessageListenerContainer created) {
        if (!state.compareAndSet(OPEN, STARTING)) {
            destroy(created); // closed before the start
            return;
        }
        try {
            created.start();
        }
        catch (RuntimeException ex) {
            // The container keeps trying in the background; waiters fall back to their backoff meanwhile.
            log.debug("Subscription to lease release channel '" + channel + "' not ready yet: " + ex);
        }
        finally {
            if (!state.compareAndSet(STARTING, STARTED)) {
                destroy(created); // closed during the start, which left the destroy to this thread
            }
        }
    }

    /**
     * Not under the lock {@link #subscribe} holds: a subscription started while the application shuts down can wait
     * for ever for a connection from a connection factory that was already stopped, and closing must not wait for it
     * (the context's shutdown hung there). The waiting thread is a daemon and ends with the JVM.
     */
    @Override
    public void close() {
        int previous = state.getAndSet(CLOSED);
        RedisMessageListenerContainer current = container;
        if (previous == STARTED && current != null) {
            destroy(current); // before or during the start, the starting thread destroys it
        }
    }

    private void destroy(RedisMessageListenerContainer created) {
        try {
            created.destroy();
        }
        catch (Exception ex) {
            log.debug("Could not stop the lease release subscription: " + ex);
        }
    }
}
