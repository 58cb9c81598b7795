package dev.lease.redis;

import java.util.List;

import org.springframework.data.redis.core.script.DefaultRedisScript;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts that make renew and release owner-checked: Redis runs a script atomically, so nothing can
 * change the key between the comparison and the {@code PEXPIRE} or {@code DEL}.
 */
final class LeaseScripts {

    /**
     * Renews every key still owned by the given owner. KEYS = lease keys; ARGV = owner1, ttlMillis1, owner2,
     * ttlMillis2, ...; returns one 1 (renewed) or 0 (not ours) per key, in order.
     */
    @SuppressWarnings("rawtypes")
    static final RedisScript<List> RENEW = new DefaultRedisScript<>("""
            local renewed = {}
            for i, key in ipairs(KEYS) do
              if redis.call('GET', key) == ARGV[2 * i - 1] then
                redis.call('PEXPIRE', key, ARGV[2 * i])
                renewed[i] = 1
              else
                renewed[i] = 0
              end
            end
            return renewed
            """, List.class);

    /**
     * Deletes the key if it is still ours and announces the release. KEYS[1] = lease key; ARGV = owner, channel,
     * lease name; returns 1 when released.
     */
    static final RedisScript<Long> RELEASE = new DefaultRedisScript<>("""
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('DEL', KEYS[1])
              redis.call('PUBLISH', ARGV[2], ARGV[3])
              return 1
            end
            return 0
            """, Long.class);

    private LeaseScripts() {
    }
}
