package dev.lease.redis;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.EmbeddedRedis;

/**
 * The contract suite as a Redis ACL user with exactly the commands, keys and channels docs/security.md lists for the
 * Redis backend (prefix {@code acl:}); and what a user without {@code DEL} loses, as documented there.
 */
class RedisAclContractTest extends LeaseBackendContractTest<RedisGrant> {

    /** The ACL rule of docs/security.md for key prefix {@code acl:}. */
    static final String RULES = "on >leaser-pw resetkeys ~acl:* resetchannels &acl:released -@all "
            + "+set +get +pexpire +del +pttl +eval +evalsha +publish +subscribe +ping";

    private static EmbeddedRedis redis;
    private static final List<LettuceConnectionFactory> factories = new ArrayList<>();
    private static RedisLeaseBackend backend;
    private static RedisLeaseBackend second;
    private static StringRedisTemplate admin;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = EmbeddedRedis.start();
        admin = redis.admin();
        aclSetUser("leaser", RULES);
        backend = new RedisLeaseBackend(as("leaser", "leaser-pw"), "acl:");
        second = new RedisLeaseBackend(as("leaser", "leaser-pw"), "acl:");
    }

    @AfterAll
    static void stopRedis() throws Exception {
        backend.close();
        second.close();
        factories.forEach(LettuceConnectionFactory::destroy);
        redis.close();
    }

    /** Retried: the first connection of a test JVM on a loaded machine may take longer than the command timeout. */
    static void aclSetUser(String user, String rules) {
        org.awaitility.Awaitility.await().atMost(seconds(30)).ignoreExceptions().until(() -> {
            admin.execute((RedisCallback<Object>) connection -> connection.execute("ACL", argv(user, rules)));
            return true;
        });
    }

    private static byte[][] argv(String user, String rules) {
        List<byte[]> args = new ArrayList<>();
        args.add("SETUSER".getBytes());
        args.add(user.getBytes());
        for (String rule : rules.split(" ")) {
            args.add(rule.getBytes());
        }
        return args.toArray(byte[][]::new);
    }

    static LettuceConnectionFactory as(String user, String password) {
        RedisStandaloneConfiguration server = new RedisStandaloneConfiguration("127.0.0.1", redis.port());
        server.setUsername(user);
        server.setPassword(password);
        LettuceConnectionFactory factory = new LettuceConnectionFactory(server, LettuceClientConfiguration.builder()
                .commandTimeout(EmbeddedRedis.COMMAND_TIMEOUT).shutdownTimeout(Duration.ZERO).build());
        factory.afterPropertiesSet();
        factory.start();
        factories.add(factory);
        return factory;
    }

    @Override
    protected LeaseBackend<RedisGrant> backend() {
        return backend;
    }

    @Override
    protected LeaseBackend<RedisGrant> secondBackend() {
        return second;
    }

    @Override
    protected void breakLease(String name) {
        admin.delete(backend.key(name));
    }

    @Test
    void theUserCannotTouchKeysOutsideItsPrefix() {
        try (RedisConnection leaser = as("leaser", "leaser-pw").getConnection()) {
            assertThatThrownBy(() -> leaser.stringCommands().set("other:key".getBytes(), "x".getBytes()))
                    .rootCause().hasMessageContaining("NOPERM");
            assertThatThrownBy(() -> leaser.keyCommands().keys("*".getBytes()))
                    .rootCause().hasMessageContaining("NOPERM");
        }
    }

    /**
     * Without {@code DEL} a release cannot free the name: the release script fails, and the key lives out its ttl, so
     * the next holder waits up to a ttl instead of getting the name at once. Exclusion is unaffected.
     */
    @Test
    void withoutDelAReleasedNameStaysTakenUntilItsTtlRunsOut() throws Exception {
        aclSetUser("nodel", RULES.replace("leaser-pw", "nodel-pw").replace(" +del", ""));
        RedisLeaseBackend crippled = new RedisLeaseBackend(as("nodel", "nodel-pw"), "acl:");
        try {
            String name = "nodel-" + System.nanoTime();
            RedisGrant held = crippled.tryAcquire(new GrantRequest(name, seconds(2), reason -> { })).orElseThrow();
            assertThatThrownBy(() -> crippled.release(held)).rootCause()
                    .hasMessageContaining("can't run this command");
            assertThat(crippled.tryAcquire(new GrantRequest(name, seconds(2), reason -> { })))
                    .as("still taken after the failed release").isEmpty();
            org.awaitility.Awaitility.await().atMost(seconds(10)).until(() -> crippled
                    .tryAcquire(new GrantRequest(name, seconds(2), reason -> { })).isPresent());
        }
        finally {
            crippled.close();
        }
    }
}
