package dev.lease.samples.reports;

import java.util.Map;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Repository;

/**
 * Reports stored in Redis, one hash per period: saving is an upsert keyed by the period, so saving the same report
 * twice leaves one report.
 */
@Repository
public class SalesReports {

    private static final String RUNS = "report-runs";

    private final StringRedisTemplate redis;

    SalesReports(StringRedisTemplate redis) {
        this.redis = redis;
    }

    /** Whether the report of this period exists. */
    public boolean exists(String period) {
        return Boolean.TRUE.equals(redis.hasKey(key(period)));
    }

    /** Writes the report of a period, replacing any earlier one, and counts the computation. */
    public void save(String period, Map<String, String> report) {
        redis.opsForHash().putAll(key(period), report);
        redis.opsForHash().increment(RUNS, period, 1);
    }

    /** The report of a period; empty when none. */
    public Map<Object, Object> find(String period) {
        return redis.opsForHash().entries(key(period));
    }

    /** How many times the report of a period was computed: 1 unless work was wasted. */
    public long computations(String period) {
        Object runs = redis.opsForHash().get(RUNS, period);
        return runs == null ? 0 : Long.parseLong(runs.toString());
    }

    private static String key(String period) {
        return "report:" + period;
    }
}
