package dev.lease.fence.http;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What a native image must keep for {@link FencedRequest} (registered in {@code META-INF/spring/aot.factories}): its
 * attributes are read through the annotation interface's methods, by reflection. The handlers' proxies are generated
 * by Spring AOT at build time ({@code FencedRequestPostProcessor} is an advising post-processor).
 */
class FencedHttpRuntimeHints implements RuntimeHintsRegistrar {

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.reflection().registerType(FencedRequest.class, MemberCategory.INVOKE_DECLARED_METHODS);
    }
}
