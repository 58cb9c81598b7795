package dev.lease.redis;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.data.redis.core.StringRedisTemplate;

import dev.lease.testing.EmbeddedRedis;
import dev.lease.contract.LeaseBackendContractTest;
import dev.lease.spi.LeaseBackend;

class RedisLeaseBackendContractTest extends LeaseBackendContractTest<RedisGrant> {

    private static EmbeddedRedis redis;
    private static RedisLeaseBackend backend;
    private static RedisLeaseBackend second;
    private static StringRedisTemplate admin;

    @BeforeAll
    static void startRedis() throws Exception {
        redis = EmbeddedRedis.start();
        backend = new RedisLeaseBackend(redis.connectionFactory(), "contract:");
        second = new RedisLeaseBackend(redis.connectionFactory(), "contract:");
        admin = redis.admin();
    }

    @AfterAll
    static void stopRedis() throws Exception {
        backend.close();
        second.close();
        redis.close();
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
}
