package dev.lease.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** Every shipped SQL script is kept in a native image, as Spring AOT finds the hints: through aot.factories. */
class SqlScriptsRuntimeHintsTest {

    @Test
    void everyShippedScriptIsAResourceHint() throws IOException {
        RuntimeHints hints = new RuntimeHints();
        SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                .load(RuntimeHintsRegistrar.class).forEach(registrar -> registrar.registerHints(hints, null));
        List<String> scripts = new ArrayList<>();
        for (Resource script : new PathMatchingResourcePatternResolver().getResources("classpath*:dev/lease/**/*.sql")) {
            String url = script.getURL().toString();
            scripts.add(url.substring(url.lastIndexOf("dev/lease/")));
        }

        assertThat(scripts).as("the lease table's and lease_fence's scripts for three platforms").hasSizeGreaterThan(6);
        for (String script : scripts) {
            assertThat(RuntimeHintsPredicates.resource().forResource(script)).as(script).accepts(hints);
        }
    }
}
