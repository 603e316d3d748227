export const nothing = 1;
