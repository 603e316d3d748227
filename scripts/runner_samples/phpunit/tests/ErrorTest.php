<?php
use PHPUnit\Framework\TestCase;

final class ErrorTest extends TestCase
{
    public function testCallsMissing(): void
    {
        $this->assertSame(1, undefined_function_xyz());
    }
}
