package dev.lease.redis;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataAccessException;

import dev.lease.testing.EmbeddedRedis;

/** {@link RedisLeaseBackend#checkHealth}: a PING on a real redis-server of its own, stopped and started again. */
class RedisHealthTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private EmbeddedRedis redis;
    private RedisLeaseBackend backend;

    @BeforeEach
    void startRedis() throws Exception {
        redis = EmbeddedRedis.start();
        backend = new RedisLeaseBackend(redis.connectionFactory(), "health:");
    }

    @AfterEach
    void stopRedis() throws Exception {
        backend.close();
        redis.close();
    }

    @Test
    void aServerThatAnswersThePingIsHealthy() throws Exception {
        assertThat(backend.checkHealth(TIMEOUT)).containsEntry("ping", "PONG").containsEntry("keyPrefix", "health:");
    }

    @Test
    void aStoppedServerIsNotHealthyAndARestartedOneIsAgain() throws Exception {
        redis.stop();

        assertThatThrownBy(() -> backend.checkHealth(TIMEOUT)).isInstanceOf(DataAccessException.class);

        redis.restart();
        await().atMost(seconds(20)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> "PONG".equals(backend.checkHealth(TIMEOUT).get("ping")));
    }
}
